package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// openFDs counts this process's open descriptors (Linux), -1 elsewhere,
// after a collection: the pipes the runtime keeps for splicing close when
// its pool of them is collected.
func openFDs() int {
	runtime.GC()
	runtime.GC()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// settle waits until the goroutines and descriptors are back to at most
// the given counts (plus slack goroutines), and reports what it saw.
func settle(goroutines, fds, slack int) (int, int, bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		f := openFDs()
		g := runtime.NumGoroutine()
		if g <= goroutines+slack && f <= fds || time.Now().After(deadline) {
			return g, f, g <= goroutines+slack && f <= fds
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// steady returns the goroutine and descriptor counts once they have
// stopped moving (two samples 100 ms apart agree), or after 2 s.
func steady() (int, int) {
	f := openFDs()
	g := runtime.NumGoroutine()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		f1 := openFDs()
		g1 := runtime.NumGoroutine()
		if g1 == g && f1 == f {
			break
		}
		g, f = g1, f1
	}
	return g, f
}

// TestServeLifecycle runs the proxies 1,000 times in one process (100
// with -short), each run with a live tunnel of every kind open when it
// ends: a CONNECT tunnel, a SOCKS tunnel, a terminated tunnel with a
// request whose response is in flight, and a plain request whose
// response is in flight. Ending a run's context must close every one of
// them and return from Serve; after all the runs the goroutines and the
// descriptors are back where they started.
func TestServeLifecycle(t *testing.T) {
	runs := 1000
	if testing.Short() {
		runs = 100
	}
	// The upstreams hold every connection open until the proxy closes it.
	hold := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: 1\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	plainSrv := httptest.NewServer(hold)
	defer plainSrv.Close()
	tlsSrv := httptest.NewTLSServer(hold)
	defer tlsSrv.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	runCA, _ := NewCA()
	trust := x509.NewCertPool()
	trust.AddCert(runCA.Cert)
	allowed, _ := policy.ParseHostList([]string{"127.0.0.1"})
	rules := &netpolicy.Rules{Allowed: allowed}
	e := &Egress{Token: "tok", Rules: func() *netpolicy.Rules { return rules }, TLS: &Terminator{CA: runCA, Roots: roots}}
	plainTarget := strings.TrimPrefix(plainSrv.URL, "http://")
	tlsTarget := strings.TrimPrefix(tlsSrv.URL, "https://")

	run := func(i int) {
		hl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		sl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 2)
		go func() { served <- (&HTTP{Egress: e}).Serve(ctx, hl) }()
		go func() { served <- (&SOCKS{Egress: e}).Serve(ctx, sl) }()
		var clients []net.Conn
		defer func() {
			for _, c := range clients {
				c.Close()
			}
		}()
		// An opaque CONNECT tunnel, and a SOCKS one (what the client
		// says first is not TLS).
		c, _, err := connectThrough(hl.Addr().String(), silent.Addr().String())
		if err != nil {
			t.Fatalf("run %d: CONNECT: %v", i, err)
		}
		clients = append(clients, c)
		io.WriteString(c, "hello")
		c, err = socksConnect(sl.Addr().String(), silent.Addr().String())
		if err != nil {
			t.Fatalf("run %d: SOCKS: %v", i, err)
		}
		clients = append(clients, c)
		io.WriteString(c, "hello")
		// A terminated tunnel whose response is in flight.
		c, br, err := connectThrough(hl.Addr().String(), tlsTarget)
		if err != nil {
			t.Fatalf("run %d: CONNECT: %v", i, err)
		}
		clients = append(clients, c)
		tc := tls.Client(&bufferedConn{Conn: c, r: br}, &tls.Config{RootCAs: trust, ServerName: "127.0.0.1"})
		fmt.Fprintf(tc, "GET /hold HTTP/1.1\r\nHost: %s\r\n\r\n", tlsTarget)
		tbr := bufio.NewReader(tc)
		if line, err := tbr.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("run %d: terminated: %q %v", i, line, err)
		}
		// A plain request whose response is in flight.
		c, err = net.Dial("tcp", hl.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
		fmt.Fprintf(c, "GET http://%s/hold HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n", plainTarget, plainTarget)
		pbr := bufio.NewReader(c)
		if line, err := pbr.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("run %d: plain: %q %v", i, line, err)
		}

		cancel()
		for range 2 {
			select {
			case err := <-served:
				if err != nil {
					t.Fatalf("run %d: Serve: %v", i, err)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("run %d: Serve did not return after its context ended", i)
			}
		}
		// Every client sees its connection end.
		for k, c := range clients {
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			var err error
			switch k {
			case 2:
				_, err = io.Copy(io.Discard, tbr)
			case 3:
				_, err = io.Copy(io.Discard, pbr)
			default:
				_, err = io.Copy(io.Discard, c)
			}
			if isTimeout(err) {
				t.Fatalf("run %d: client %d still open after the run", i, k)
			}
		}
	}
	// One run first, so that the servers' pools and the runtime's are
	// warm when the counts are taken.
	run(-1)
	g0, f0 := steady()
	start := time.Now()
	for i := range runs {
		run(i)
	}
	g, f, ok := settle(g0, f0, 2)
	t.Logf("%d runs in %v; goroutines %d → %d, descriptors %d → %d", runs, time.Since(start).Round(time.Millisecond), g0, g, f0, f)
	if !ok {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines %d → %d, descriptors %d → %d; goroutines:\n%s", g0, g, f0, f, buf[:runtime.Stack(buf, true)])
	}
}

// flakyListener fails its first n Accepts with err.
type flakyListener struct {
	net.Listener
	mu  sync.Mutex
	n   int
	err error
}

func (l *flakyListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.n > 0 {
		l.n--
		l.mu.Unlock()
		return nil, l.err
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

// temporaryError is an Accept error to wait out (EMFILE is one).
type temporaryError struct{}

func (temporaryError) Error() string   { return "too many open files" }
func (temporaryError) Temporary() bool { return true }
func (temporaryError) Timeout() bool   { return false }

// TestServeAcceptErrors: a temporary Accept error (too many open files)
// is waited out, with pauses that double from 5 ms, and serving goes on;
// any other ends Serve, which returns it.
func TestServeAcceptErrors(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT"}, nil, nil)
	target := fmt.Sprintf("127.0.0.1:%d", tb.port)
	for _, kind := range []string{"http", "socks", "filtered"} {
		t.Run(kind, func(t *testing.T) {
			raw, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			l := &flakyListener{Listener: raw, n: 4, err: temporaryError{}}
			e := *tb.egress
			var serve func(context.Context, net.Listener) error
			switch kind {
			case "http":
				serve = (&HTTP{Egress: &e}).Serve
			case "socks":
				serve = (&SOCKS{Egress: &e}).Serve
			case "filtered":
				e.Filter = &Filter{}
				serve = (&HTTP{Egress: &e}).Serve
			}
			served := make(chan error, 1)
			start := time.Now()
			go func() { served <- serve(context.Background(), l) }()
			// 5 + 10 + 20 + 40 ms of pauses before the first connection
			// is accepted.
			var c net.Conn
			switch kind {
			case "http":
				c, _, err = connectThrough(raw.Addr().String(), target)
			case "socks":
				c, err = socksConnect(raw.Addr().String(), target)
			case "filtered":
				// A CONNECT without a CA: the filter's own refusal.
				c, err = net.Dial("tcp", raw.Addr().String())
				if err == nil {
					fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
					var line string
					line, err = bufio.NewReader(c).ReadString('\n')
					if err == nil && line != "HTTP/1.1 403 Forbidden\r\n" {
						err = fmt.Errorf("answer %q", line)
					}
				}
			}
			if err != nil {
				t.Fatalf("after temporary errors: %v", err)
			}
			c.Close()
			if d := time.Since(start); d < 75*time.Millisecond {
				t.Errorf("served after %v: no pause between temporary errors", d)
			}
			// A permanent error ends Serve.
			l.mu.Lock()
			l.n, l.err = 1, errors.New("listener broken")
			l.mu.Unlock()
			if c, err := net.Dial("tcp", raw.Addr().String()); err == nil { // wake the pending Accept
				c.Close()
			}
			select {
			case err := <-served:
				if err == nil || !strings.Contains(err.Error(), "listener broken") {
					t.Errorf("Serve returned %v, want the listener's error", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return after a permanent Accept error")
			}
			raw.Close()
		})
	}
}

// TestServeGrace: with Grace, a request in progress when the context
// ends is answered before its connection closes; without, or when the
// context ends with ErrNoGrace, it is cut.
func TestServeGrace(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		io.WriteString(w, "late answer")
	}))
	defer srv.Close()
	target := strings.TrimPrefix(srv.URL, "http://")
	allowed, _ := policy.ParseHostList([]string{"127.0.0.1"})
	rules := &netpolicy.Rules{Allowed: allowed}
	for _, tc := range []struct {
		grace time.Duration
		cause error
	}{{0, nil}, {5 * time.Second, nil}, {5 * time.Second, ErrNoGrace}} {
		grace, answered := tc.grace, tc.grace > 0 && tc.cause == nil
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		served := make(chan error, 1)
		go func() {
			served <- (&HTTP{Egress: &Egress{Rules: func() *netpolicy.Rules { return rules }}, Grace: grace}).Serve(ctx, l)
		}()
		// An idle connection, which closes at once either way.
		idle, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		time.Sleep(100 * time.Millisecond)
		start := time.Now()
		cancel(tc.cause)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		var body []byte
		if err == nil {
			body, err = io.ReadAll(resp.Body)
		}
		idle.SetReadDeadline(time.Now().Add(time.Second))
		if _, ierr := idle.Read(make([]byte, 1)); isTimeout(ierr) {
			t.Errorf("grace %v: an idle connection stayed open", grace)
		}
		switch {
		case answered && (err != nil || string(body) != "late answer"):
			t.Errorf("grace %v: %q %v, want the answer", grace, body, err)
		case !answered && err == nil:
			t.Errorf("grace %v, cause %v: %q, want the connection closed", grace, tc.cause, body)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("grace %v: Serve took %v to return after the last answer", grace, d)
		}
		c.Close()
		idle.Close()
	}
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestTunnelIdle: a tunnel closes once neither direction has carried a
// byte for the idle time, and stays open while either carries one now
// and then, however long that goes on.
func TestTunnelIdle(t *testing.T) {
	// Three seconds of idle against a byte every tenth of it: a loaded
	// machine that stalls the writer for most of a second (seen with the
	// whole test suite and more on two processors) does not look like
	// silence.
	const idle = 3 * time.Second
	for _, tc := range []struct {
		name string
		// trickle writes a byte every idle/10 for 1.6 idle periods from the
		// client (up) or the server (down), or both ways in turn.
		trickle string
	}{{"silent", ""}, {"client speaks", "up"}, {"server speaks", "down"}, {"in turn", "both"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			client, proxyClient := tcpPair(t)
			proxyUp, server := tcpPair(t)
			defer client.Close()
			defer server.Close()
			done := make(chan struct{})
			go func() {
				tunnel(proxyClient, proxyUp, idle)
				close(done)
			}()
			go io.Copy(io.Discard, server)
			go io.Copy(io.Discard, client)
			start := time.Now()
			last := start
			if tc.trickle != "" {
				for i := range 16 {
					w := client
					if tc.trickle == "down" || tc.trickle == "both" && i/4%2 == 1 {
						w = server
					}
					if _, err := w.Write([]byte{'x'}); err != nil {
						t.Fatalf("write %d after %v: %v", i, time.Since(start), err)
					}
					last = time.Now()
					select {
					case <-done:
						t.Fatalf("closed after %v while bytes moved", time.Since(start))
					case <-time.After(idle / 10):
					}
				}
			}
			select {
			case <-done:
				if d := time.Since(last); d < idle {
					t.Errorf("closed %v after the last byte, before the idle time", d)
				}
			case <-time.After(10 * idle):
				t.Fatalf("still open %v after the last byte", 10*idle)
			}
		})
	}
}
