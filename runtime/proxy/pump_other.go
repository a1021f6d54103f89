//go:build !unix

package proxy

import "syscall"

// waitReadable does not wait where a peek is not at hand: the read that
// follows waits, holding its buffer.
func waitReadable(syscall.RawConn) error { return nil }
