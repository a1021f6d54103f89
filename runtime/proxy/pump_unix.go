//go:build unix

package proxy

import (
	"io"
	"os"
	"sync"
	"syscall"
)

// rawReads says whether readRaw reads a TCP connection itself.
const rawReads = true

// readRaw reads c into a buffer of size from pool, taken only once c
// may have bytes: a read that would wait gives the buffer back and waits
// without it, as net's own reads wait. It returns the buffer (nil when
// it has none), the bytes read, and io.EOF at the end of the stream, the
// error of the read, of a read deadline or of a closed connection.
func readRaw(c syscall.RawConn, pool *sync.Pool, size int) (*[]byte, int, error) {
	var bp *[]byte
	var n int
	var rerr error
	err := c.Read(func(fd uintptr) bool {
		bp = pool.Get().(*[]byte)
		n, rerr = syscall.Read(int(fd), (*bp)[:size])
		if rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK || rerr == syscall.EINTR {
			pool.Put(bp)
			bp = nil
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return bp, 0, err
	case rerr != nil:
		return bp, 0, os.NewSyscallError("read", rerr)
	case n <= 0:
		return bp, 0, io.EOF
	}
	return bp, n, nil
}
