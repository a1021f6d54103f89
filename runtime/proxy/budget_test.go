package proxy

import (
	"context"
	"net"
	"testing"
	"time"
)

// TestConnBudget: past the budget a connection is closed at once; a place
// freed is taken again; the count returns to zero when the connections
// end, through both accept paths (the SOCKS proxy's loop, the HTTP
// proxy's server).
func TestConnBudget(t *testing.T) {
	saved := conns
	conns = &connBudget{max: 2}
	conns.once.Do(func() {})
	defer func() { conns = saved }()
	const base = 0
	for _, serve := range []struct {
		name  string
		serve func(context.Context, net.Listener) error
	}{
		{"socks", (&SOCKS{Egress: &Egress{}}).Serve},
		{"http", (&HTTP{Egress: &Egress{}}).Serve},
	} {
		t.Run(serve.name, func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- serve.serve(ctx, l) }()
			var open []net.Conn
			for range 2 {
				c, err := net.Dial("tcp", l.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				open = append(open, c)
			}
			waitFor(t, func() bool { return conns.n.Load() == base+2 })
			over, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			over.SetReadDeadline(time.Now().Add(5 * time.Second))
			if n, err := over.Read(make([]byte, 1)); n != 0 || err == nil || isTimeout(err) {
				t.Errorf("a connection past the budget: read %d, %v; want it closed", n, err)
			}
			over.Close()
			open[0].Close()
			waitFor(t, func() bool { return conns.n.Load() == base+1 })
			cancel()
			<-done
			for _, c := range open {
				c.Close()
			}
			waitFor(t, func() bool { return conns.n.Load() == base })
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 5 s")
}
