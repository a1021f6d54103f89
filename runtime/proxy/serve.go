package proxy

// The proxies' lifecycle: Serve accepts until its context ends, keeps
// every connection it accepted in a set, and on the way out closes them
// all (the hijacked CONNECT tunnels and the terminated ones included) and
// waits for their goroutines. Everything a connection opens upstream is
// closed with it.

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultTunnelIdle is how long a tunnel (CONNECT, SOCKS, a relay, an
// upgraded connection, a response body that stalls) may carry no byte in
// either direction before the proxy closes it. A stream that moves a
// byte now and then, however slowly, stays open.
const DefaultTunnelIdle = 15 * time.Minute

// tunnelIdle is Egress.TunnelIdle with its default; 0 means never.
func (e *Egress) tunnelIdle() time.Duration {
	switch {
	case e == nil || e.TunnelIdle == 0:
		return DefaultTunnelIdle
	case e.TunnelIdle < 0:
		return 0
	}
	return e.TunnelIdle
}

// A connSet is the connections one Serve call has open, and the
// goroutines serving them. Everything a connection opens upstream closes
// when life ends, which is when the set has closed every connection.
type connSet struct {
	life context.Context
	kill context.CancelFunc

	mu      sync.Mutex
	conns   map[net.Conn]bool // value: in the middle of a request
	closing bool              // closing: an idle connection is closed at once
	wg      sync.WaitGroup
}

// newConnSet returns a set whose life keeps ctx's values, not its end:
// a shutdown may let requests in progress finish.
func newConnSet(ctx context.Context) *connSet {
	life, kill := context.WithCancel(context.WithoutCancel(ctx))
	return &connSet{life: life, kill: kill, conns: map[net.Conn]bool{}}
}

// add records c, busy or not; once the set is closing, c is closed at
// once, and add reports false.
func (s *connSet) add(c net.Conn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = busy
	if s.closing {
		c.Close()
		return false
	}
	return true
}

func (s *connSet) remove(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// busy marks c in the middle of a request (true) or between requests;
// a connection that goes idle while the set closes is closed.
func (s *connSet) busy(c net.Conn, busy bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return
	}
	s.conns[c] = busy
	if !busy && s.closing {
		c.Close()
	}
}

// close closes the idle connections, and the busy ones too when all is
// set; from then on a connection is closed as soon as it goes idle.
func (s *connSet) close(all bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing = true
	for c, busy := range s.conns {
		if all || !busy {
			c.Close()
		}
	}
}

// idle reports whether no connection is in the middle of a request.
func (s *connSet) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, busy := range s.conns {
		if busy {
			return false
		}
	}
	return true
}

// shutdown closes the set's connections: the idle ones at once, the
// busy ones when they go idle or after grace, whichever comes first;
// then it ends life (and with it every upstream connection) and returns
// when every goroutine serving the set has.
func (s *connSet) shutdown(grace time.Duration) {
	s.close(false)
	if grace > 0 {
		deadline := time.Now().Add(grace)
		for !s.idle() && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	s.close(true)
	s.kill()
	s.wg.Wait()
}

// temporary reports whether an Accept error is one to wait out (too
// many open files, an aborted connection), as net/http's server does.
func temporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// acceptLoop accepts connections on l until ctx ends or l fails, and
// serves each with handle on a goroutine of its own, in set (busy or
// idle as it starts). A temporary error is retried after a pause that
// doubles from 5 ms to 1 s, as net/http's server does. It returns nil
// once ctx has ended, else the error that stopped it; it closes l
// either way. The caller shuts the set down.
func acceptLoop(ctx context.Context, l net.Listener, set *connSet, busy bool, handle func(context.Context, net.Conn)) error {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	defer l.Close()
	var pause time.Duration
	budget := conns
	for {
		c, err := l.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !temporary(err) {
				return err
			}
			pause = min(max(2*pause, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(pause):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		pause = 0
		if !budget.acquire() {
			c.Close() // the descriptors left are the process's (reserveFDs)
			continue
		}
		if !set.add(c, busy) {
			set.remove(c)
			budget.release()
			continue
		}
		set.wg.Add(1)
		go func() {
			defer set.wg.Done()
			defer budget.release()
			defer set.remove(c)
			defer c.Close()
			cctx, cancel := context.WithCancel(set.life)
			defer cancel()
			handle(cctx, c)
		}()
	}
}

// lifeKey holds, in the context of a request net/http serves, the life
// of its Serve's connections.
type lifeKey struct{}

// lifeOf is the context a connection taken over from net/http's server
// lives in: its Serve's life. The request's own context will not do: net/http
// cancels it when a read on the taken-over connection's buffered reader
// fails, a read deadline included.
func lifeOf(ctx context.Context) context.Context {
	if life, ok := ctx.Value(lifeKey{}).(context.Context); ok {
		return life
	}
	return context.WithoutCancel(ctx)
}

// closeWith closes c when ctx ends; the returned function stops that
// (call it once c is closed otherwise).
func closeWith(ctx context.Context, c io.Closer) (stop func() bool) {
	return context.AfterFunc(ctx, func() { c.Close() })
}

// tunnel copies both ways between a and b until both directions are
// done, passing a half-close on, and returns. An error in either
// direction (a reset, a connection closed by a shutdown) closes both,
// so that the other direction ends too; so does idle (0: never) without
// a byte in either direction. The bytes go through pumps (pump.go).
func tunnel(a, b net.Conn, idle time.Duration) {
	t := &tunnelState{a: a, b: b, idle: idle}
	t.last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	wg.Add(2)
	go t.copy(&wg, b, a)
	go t.copy(&wg, a, b)
	wg.Wait()
}

// tunnelState is what the two directions of a tunnel share: when either
// last carried a byte, so that a direction that waits in vain for idle
// closes the tunnel only if the other has been as quiet.
type tunnelState struct {
	a, b net.Conn
	idle time.Duration
	last atomic.Int64 // UnixNano
}

// copy is one direction of a tunnel (a named function, so that stacks
// show what the goroutines are).
func (t *tunnelState) copy(wg *sync.WaitGroup, dst, src net.Conn) {
	defer wg.Done()
	p := newPump(dst, src).idleFor(src, t.idle)
	p.last = &t.last
	for {
		_, err := p.run()
		if err == nil {
			p.stop()
			closeWrite(dst)
			return
		}
		if t.idle > 0 && isTimeout(err) && time.Since(time.Unix(0, t.last.Load())) < t.idle {
			p.refreshed = time.Time{} // the other direction spoke: wait on
			continue
		}
		t.a.Close()
		t.b.Close()
		return
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
