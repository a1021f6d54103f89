package proxy

// Moving bytes. Tunnels and response bodies that nothing rewrites are
// copied through this process in large reads rather than spliced: on the
// loopback connections the proxies sit between, splice(2) through a pipe
// costs this process about twice the CPU of a read and a write of up to
// 1 MiB each (docs/performance.md), and a blocked splice holds a pipe,
// two descriptors, per direction of every idle tunnel.
//
// Reads take their buffer from a pool: 32 KiB, or 1 MiB while each read
// fills the one before. On a TCP connection of the kernel's the pump
// reads the socket itself (readRaw), taking the buffer only once the
// socket may have bytes: an idle tunnel or a paused stream holds no
// buffer at all.

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	smallRead = 32 << 10
	largeRead = 1 << 20
)

var (
	smallBufs = sync.Pool{New: func() any { b := make([]byte, smallRead); return &b }}
	largeBufs = sync.Pool{New: func() any { b := make([]byte, largeRead); return &b }}
)

// A pump copies src to dst.
type pump struct {
	dst io.Writer
	src io.Reader
	// raw, when set, is src's connection, read by readRaw.
	raw syscall.RawConn
	// flush, when set, is called after each read that emptied src for
	// the moment (it returned less than the buffer holds): a stream that
	// pauses is passed on up to its last byte.
	flush func() error
	// idle, when not zero, bounds each wait for a byte: the read
	// deadline of conn is kept at most idle ahead (refreshed now and
	// then, not at every read), so that a read fails only after idle
	// without a byte.
	idle time.Duration
	conn net.Conn
	// last, when set, is where the time of each read that brought bytes
	// goes (UnixNano): the tunnel's two directions share it.
	last *atomic.Int64
	// remain, when not negative, is how many bytes to copy at most.
	remain int64

	large     bool
	refreshed time.Time
}

// newPump returns a pump from src to dst, which reads src's socket
// itself when src is a TCP connection of the kernel's.
func newPump(dst io.Writer, src io.Reader) *pump {
	p := &pump{dst: dst, src: src, remain: -1}
	if tc, ok := src.(*net.TCPConn); ok && rawReads {
		p.raw, _ = tc.SyscallConn()
	}
	return p
}

// run copies until src ends (nil, as io.Copy), remain bytes have gone,
// or an error: a read's (a deadline's included) or a write's. It
// returns the bytes it copied.
func (p *pump) run() (int64, error) {
	var total int64
	for p.remain != 0 {
		if p.idle > 0 {
			if now := time.Now(); now.Sub(p.refreshed) > min(time.Second, p.idle/4) {
				p.conn.SetReadDeadline(now.Add(p.idle))
				p.refreshed = now
			}
		}
		pool, size := &smallBufs, smallRead
		if p.large {
			pool, size = &largeBufs, largeRead
		}
		if p.remain > 0 && int64(size) > p.remain {
			size = int(p.remain)
		}
		var bp *[]byte
		var n int
		var err error
		if p.raw != nil {
			bp, n, err = readRaw(p.raw, pool, size)
		} else {
			bp = pool.Get().(*[]byte)
			n, err = p.src.Read((*bp)[:size])
		}
		if n > 0 {
			if p.last != nil {
				p.last.Store(time.Now().UnixNano())
			}
			_, werr := p.dst.Write((*bp)[:n])
			total += int64(n)
			if p.remain > 0 {
				p.remain -= int64(n)
			}
			if werr == nil && n < size && p.flush != nil {
				werr = p.flush()
			}
			if werr != nil {
				pool.Put(bp)
				return total, werr
			}
		}
		// Large reads while each fills its buffer; back to small ones
		// once the source runs dry.
		p.large = n == size || p.large && n > smallRead
		if bp != nil {
			pool.Put(bp)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// idleFor sets the pump's idle time on conn (the connection src reads).
func (p *pump) idleFor(conn net.Conn, idle time.Duration) *pump {
	p.conn, p.idle = conn, idle
	return p
}

// stop clears the read deadline the pump kept.
func (p *pump) stop() {
	if p.idle > 0 {
		p.conn.SetReadDeadline(time.Time{})
	}
}
