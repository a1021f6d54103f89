//go:build !unix

package proxy

// openFileLimit: Windows has no such limit for sockets that srt meets.
func openFileLimit() int { return 1 << 20 }
