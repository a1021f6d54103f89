//go:build unix

package proxy

import "syscall"

// openFileLimit is this process's limit of open descriptors (the soft
// RLIMIT_NOFILE, which Go raises to the hard one when it starts).
func openFileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 1 << 20
	}
	return int(l.Cur)
}
