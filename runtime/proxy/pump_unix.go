//go:build unix

package proxy

import "syscall"

// waitReadable returns when c has bytes to read, has ended, or has
// failed (what the next read will tell), or with the error of a read
// deadline or a closed connection. It looks with a one-byte MSG_PEEK,
// so that no buffer waits with it.
func waitReadable(c syscall.RawConn) error {
	return c.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return err != syscall.EAGAIN && err != syscall.EWOULDBLOCK && err != syscall.EINTR
	})
}
