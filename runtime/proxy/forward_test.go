package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// A way is one of the forwarder's four callers, set up around an upstream
// handler: a client that goes through the proxy, and the URL of the
// upstream as that client names it.
type way struct {
	name   string
	client *http.Client
	url    string
	egress *Egress // nil for filtered mode
}

// ways serves h over HTTP and over HTTPS on loopback and returns the
// ways to reach it: an absolute-form request to the HTTP proxy ("plain"),
// the same with a masked credential configured, so that every body is
// read for it ("plain-scanned"), a terminated CONNECT tunnel
// ("terminated"), and srt proxy's filtered mode, plain and terminated.
func ways(t *testing.T, h http.Handler) []way {
	t.Helper()
	plainSrv := httptest.NewServer(h)
	tlsSrv := httptest.NewTLSServer(h)
	t.Cleanup(plainSrv.Close)
	t.Cleanup(tlsSrv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	runCA, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	trust := x509.NewCertPool()
	trust.AddCert(runCA.Cert)
	client := func(proxyAddr string) *http.Client {
		return &http.Client{Transport: &http.Transport{
			Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: proxyAddr}),
			TLSClientConfig: &tls.Config{RootCAs: trust},
		}}
	}
	allowed, _ := policy.ParseHostList([]string{"127.0.0.1"})
	rules := &netpolicy.Rules{Allowed: allowed}
	serve := func(e *Egress) string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { (&HTTP{Egress: e}).Serve(ctx, l); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
		return l.Addr().String()
	}
	egress := func() *Egress {
		return &Egress{Rules: func() *netpolicy.Rules { return rules }, TLS: &Terminator{CA: runCA, Roots: roots}}
	}
	plain, scanned := egress(), egress()
	scanned.Inject = &Injector{Secrets: []Secret{{Name: "T", Sentinel: testSentinel, Real: testReal, Inject: func(h string) bool { return h == "inject.test" }}}}
	bed := newFilterBed(t, helloLocal, &Terminator{CA: runCA, Roots: roots}, verdictFor(`"action":"allow"`))
	return []way{
		{"plain", client(serve(plain)), plainSrv.URL, plain},
		{"plain-scanned", client(serve(scanned)), plainSrv.URL, scanned},
		{"terminated", client(serve(plain)), tlsSrv.URL, plain},
		{"filtered", client(bed.addr), plainSrv.URL, nil},
		{"filtered-terminated", client(bed.addr), tlsSrv.URL, nil},
	}
}

// TestForwardStreams: a response the upstream writes in pieces (server-
// sent events) reaches the client piece by piece, not when a buffer
// fills or the body ends.
func TestForwardStreams(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "data: last\n\n")
	})
	for _, w := range ways(t, h) {
		t.Run(w.name, func(t *testing.T) {
			// The head and the first event must come while the upstream
			// holds the rest.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", w.url+"/events", nil)
			resp, err := w.client.Do(req)
			if err != nil {
				t.Fatalf("no answer while the upstream held the rest of its body: %v", err)
			}
			defer resp.Body.Close()
			line, err := bufio.NewReader(resp.Body).ReadString('\n')
			if line != "data: first\n" {
				t.Errorf("first line %q (%v) while the upstream held the rest", line, err)
			}
		})
	}
}

// TestForwardBrokenBody: an upstream that breaks off in the middle of a
// body (short of its Content-Length, or before the last chunk) gives the
// client an error, never a body that looks whole.
func TestForwardBrokenBody(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		switch r.URL.Path {
		case "/length":
			brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + strings.Repeat("x", 50000))
		case "/chunked":
			brw.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
		}
		brw.Flush()
	})
	for _, w := range ways(t, h) {
		for _, path := range []string{"/length", "/chunked"} {
			t.Run(w.name+path, func(t *testing.T) {
				resp, err := w.client.Get(w.url + path)
				if err != nil {
					return // an error before the head is one too
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err == nil {
					t.Errorf("%s: the client read %d bytes and no error", resp.Status, len(b))
				}
			})
		}
	}
}

// TestForwardInformationalAndTrailers: a 103 is passed on before the
// final answer, and trailers after the body.
func TestForwardInformationalAndTrailers(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		w.Header().Del("Link")
		w.Header().Set("Trailer", "X-Checksum")
		io.WriteString(w, "body")
		w.(http.Flusher).Flush()
		w.Header().Set("X-Checksum", "abc")
	})
	for _, w := range ways(t, h) {
		t.Run(w.name, func(t *testing.T) {
			var early []string
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				early = append(early, fmt.Sprintf("%d %s", code, h.Get("Link")))
				return nil
			}}
			req, _ := http.NewRequest("GET", w.url+"/", nil)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
			resp, err := w.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != "body" {
				t.Fatalf("body %q %v", b, err)
			}
			if len(early) != 1 || early[0] != "103 </style.css>; rel=preload" {
				t.Errorf("informational responses %q", early)
			}
			if got := resp.Trailer.Get("X-Checksum"); got != "abc" {
				t.Errorf("trailer X-Checksum %q (trailers %v)", got, resp.Trailer)
			}
		})
	}
}

// TestForwardDirect: a body nothing rewrites, from a plain upstream,
// with a length, is read straight from the upstream's socket; a scanned
// one, or one over TLS, is not.
func TestForwardDirect(t *testing.T) {
	const size = 4 << 20
	body := strings.Repeat("0123456789abcdef", size/16)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		io.WriteString(w, body)
	})
	var direct atomic.Int64
	directHook = func(n int64) { direct.Add(n) }
	defer func() { directHook = nil }()
	for _, w := range ways(t, h) {
		t.Run(w.name, func(t *testing.T) {
			direct.Store(0)
			resp, err := w.client.Get(w.url + "/big")
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != body {
				t.Fatalf("%d bytes, %v", len(b), err)
			}
			want := w.name == "plain" || w.name == "filtered"
			if got := direct.Load(); want != (got > size/2) {
				t.Errorf("%d bytes read straight from the socket", got)
			}
		})
	}
}

// TestForwardUpgrade: a protocol switch becomes a tunnel between the
// client and the upstream, over plain HTTP and in a terminated tunnel.
func TestForwardUpgrade(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "echo" {
			http.Error(w, "want Upgrade: echo, got "+fmt.Sprint(r.Header), http.StatusBadRequest)
			return
		}
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		brw.Flush()
		io.Copy(c, brw)
	})
	for _, w := range ways(t, h) {
		if strings.HasPrefix(w.name, "filtered") {
			continue // filtered mode forwards no protocol switch
		}
		t.Run(w.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", w.url+"/ws", nil)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "echo")
			resp, err := w.client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusSwitchingProtocols {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("%s %q", resp.Status, b)
			}
			rw := resp.Body.(io.ReadWriteCloser)
			io.WriteString(rw, "ping\n")
			line, err := bufio.NewReader(rw).ReadString('\n')
			if line != "ping\n" {
				t.Errorf("echo %q %v", line, err)
			}
		})
	}
	// A host a masked credential may be injected into sends nothing that
	// is not read for it: no switch.
	tb := newTLSBed(t, h)
	req, _ := http.NewRequest("GET", "https://inject.test/ws", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	resp, err := tb.client(tb.runCA, false).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != "upgrade-refused" || !strings.Contains(string(b), "inject.test") {
		t.Errorf("switch to inject.test: %s %q", resp.Status, b)
	}
}

// TestForwardRoots: an https:// request in absolute form is verified
// against the same roots as a terminated tunnel's upstream (the extra
// CAs of tlsTerminate), and refused (502) by a proxy that has only the
// system's.
func TestForwardRoots(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "verified") }))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	ca, _ := NewCA()
	allowed, _ := policy.ParseHostList([]string{"127.0.0.1"})
	rules := &netpolicy.Rules{Allowed: allowed}
	for _, tc := range []struct {
		name   string
		term   *Terminator
		status int
	}{{"extra roots", &Terminator{CA: ca, Roots: roots}, 200}, {"system roots", nil, 502}} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go (&HTTP{Egress: &Egress{Rules: func() *netpolicy.Rules { return rules }, TLS: tc.term}}).Serve(ctx, l)
		target := strings.TrimPrefix(srv.URL, "https://")
		resp, body := rawToProxy(t, l.Addr().String(), "GET https://"+target+"/ HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
		cancel()
		if resp.StatusCode != tc.status || tc.status == 200 && body != "verified" {
			t.Errorf("%s: %s %q, want %d", tc.name, resp.Status, body, tc.status)
		}
	}
}

// TestForwardClientGone: a client that goes away while its request waits
// for the upstream's answer takes the upstream connection with it.
func TestForwardClientGone(t *testing.T) {
	gone := make(chan string, 10)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		gone <- r.URL.Path
	})
	for _, w := range ways(t, h) {
		if strings.HasPrefix(w.name, "filtered") {
			continue // filtered mode reads nothing from the client meanwhile
		}
		t.Run(w.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			req, _ := http.NewRequestWithContext(ctx, "GET", w.url+"/"+w.name, nil)
			go func() {
				time.Sleep(200 * time.Millisecond)
				cancel()
			}()
			if _, err := w.client.Do(req); err == nil {
				t.Fatal("an answer")
			}
			select {
			case p := <-gone:
				if p != "/"+w.name {
					t.Errorf("upstream request %s ended", p)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream still waits for its client")
			}
		})
	}
}

// TestForwardKeepsTunnelConnection: the requests of a terminated tunnel
// share one upstream connection, a decoded body included (a deflate
// decoder stops at the end of its stream, before the last chunk: the
// rest is read before the connection carries the next request).
func TestForwardKeepsTunnelConnection(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	tb := newTLSBed(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Encoding", "deflate")
		w.Write([]byte(encode("hello "+r.URL.Path, "deflate")))
		w.(http.Flusher).Flush() // chunked: no length
	}))
	c := tb.client(tb.runCA, false)
	for i := range 3 {
		resp, err := c.Get(fmt.Sprintf("https://inject.test/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := fmt.Sprintf("hello /%d", i); err != nil || string(b) != want {
			t.Fatalf("request %d: %q %v, want %q", i, b, err, want)
		}
	}
	if len(conns) != 1 {
		t.Errorf("%d upstream connections for 3 requests on one tunnel, want 1", len(conns))
	}
}
