package proxy

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"srt.dev/compiler/policy"
)

func TestParentFrom(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	show := func(p *Parent) string {
		if p == nil {
			return "none"
		}
		s := func(u *url.URL) string {
			if u == nil {
				return "-"
			}
			return u.String()
		}
		return s(p.HTTP) + " " + s(p.HTTPS) + " " + p.NoProxy.Text
	}
	for _, c := range []struct {
		name                 string
		http, https, noProxy string
		env                  func(string) string
		want                 string
		notes                int
	}{
		{"nothing", "", "", "", env(), "none", 0},
		{"settings win", "http://a:1", "", "x.test", env("HTTP_PROXY", "http://env:2", "NO_PROXY", "y.test"), "http://a:1 http://a:1 x.test", 0},
		{"upper case first", "", "", "", env("HTTP_PROXY", "http://up:1", "http_proxy", "http://low:1", "no_proxy", "low.test"), "http://up:1 http://up:1 low.test", 0},
		{"lower case", "", "", "", env("http_proxy", "low:3", "https_proxy", "https://tls:4"), "http://low:3 https://tls:4 ", 0},
		{"https only", "", "", "", env("HTTPS_PROXY", "sec:5"), "- http://sec:5 ", 0},
		{"bad scheme", "socks5://s:1", "", "", env(), "none", 2},
		{"no host", "http://", "", "", env(), "none", 2},
		{"https setting, http from env", "", "http://s:1", "", env("HTTP_PROXY", "e:2"), "http://e:2 http://s:1 ", 0},
	} {
		p, notes := ParentFrom(c.http, c.https, c.noProxy, c.env)
		if got := show(p); got != c.want || len(notes) != c.notes {
			t.Errorf("%s: %s %q, want %s and %d notes", c.name, got, notes, c.want, c.notes)
		}
	}
}

func TestMitmMatch(t *testing.T) {
	m := &Mitm{Domains: patterns(t, "*.inspect.test", "API.test", "0:0::1", "192.0.2.1", "::ffff:192.0.2.3")}
	for host, want := range map[string]bool{
		"a.inspect.test": true, "inspect.test": false, "api.test": true, "x.api.test": false,
		"::1": true, "192.0.2.1": true, "192.0.2.2": false, "192.0.2.3": true,
	} {
		if got := m.Match(host); got != want {
			t.Errorf("%s: %v, want %v", host, got, want)
		}
	}
}

// patterns parses host patterns as the compiler does.
func patterns(t *testing.T, entries ...string) policy.HostList {
	t.Helper()
	l, err := policy.ParseHostPatterns(entries)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// upstreamProxy is a small HTTP proxy for the tests, on a TCP or Unix
// listener: it answers a CONNECT with 200 and then one HTTP request inside
// the tunnel, and an absolute-form request itself, each answer naming what
// it saw; it records every request line with its Proxy-Authorization.
type upstreamProxy struct {
	mu   sync.Mutex
	seen []string
	// status is what it answers a CONNECT; 0 means 200.
	status int
}

func (u *upstreamProxy) log() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

func (u *upstreamProxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go u.handle(c)
	}
}

func (u *upstreamProxy) handle(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	u.mu.Lock()
	u.seen = append(u.seen, fmt.Sprintf("%s %s auth=%q", req.Method, req.RequestURI, req.Header.Get("Proxy-Authorization")))
	u.mu.Unlock()
	if req.Method != http.MethodConnect {
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nupstream proxy: %s %s host=%s", req.Method, req.RequestURI, req.Host)
		return
	}
	if u.status != 0 && u.status != 200 {
		fmt.Fprintf(c, "HTTP/1.1 %d No\r\n\r\n", u.status)
		return
	}
	fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	inner, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nupstream tunnel to %s: %s %s", req.RequestURI, inner.Method, inner.RequestURI)
}

func startUpstreamProxy(t *testing.T, network, addr string) (*upstreamProxy, string) {
	t.Helper()
	l, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	u := &upstreamProxy{}
	go u.serve(l)
	return u, l.Addr().String()
}

// connectGet opens a CONNECT tunnel through srt's proxy and sends one GET
// inside; it returns the CONNECT answer's status line and the body.
func connectGet(t *testing.T, proxyAddr, target string) (string, string) {
	t.Helper()
	_, c := rawConnect(t, proxyAddr, target, "srt:tok")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != 200 {
		return resp.Status, ""
	}
	fmt.Fprintf(c, "GET /inside HTTP/1.1\r\nHost: %s\r\n\r\n", target)
	inner, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("inside %s: %v", target, err)
	}
	b, _ := io.ReadAll(inner.Body)
	return resp.Status, string(b)
}

// TestParentProxy: allowed CONNECT, SOCKS and plain HTTP leave through the
// parent (CONNECT, absolute-form), with its credentials; refused hosts
// never reach it; NO_PROXY and loopback destinations go direct.
func TestParentProxy(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test", "*.corp.test", "direct.test"}, []string{"evil.corp.test"}, nil)
	parent, addr := startUpstreamProxy(t, "tcp", "127.0.0.1:0")
	p, notes := ParentFrom("http://u%40x:p%3Aw@"+addr, "", "direct.test", func(string) string { return "" })
	if p == nil || len(notes) > 0 {
		t.Fatalf("parent: %v %v", p, notes)
	}
	tb.egress.Parent = p
	auth := `auth="Basic ` + base64.StdEncoding.EncodeToString([]byte("u@x:p:w")) + `"`

	// Plain HTTP: absolute-form to the parent, srt's own credential gone,
	// the parent's there; no lookup by srt.
	resp, body := get(t, tb.client("srt", "tok"), "http://App.Corp.test:8080/a?b#frag")
	if resp.StatusCode != 200 || body != "upstream proxy: GET http://app.corp.test:8080/a?b host=app.corp.test:8080" {
		t.Errorf("plain: %d %q", resp.StatusCode, body)
	}
	// CONNECT.
	status, body := connectGet(t, tb.proxyAddr, "app.corp.test:443")
	if status != "200 Connection Established" || body != "upstream tunnel to app.corp.test:443: GET /inside" {
		t.Errorf("connect: %s %q", status, body)
	}
	// SOCKS: through the parent's CONNECT too.
	saddr := tb.socks(t)
	if code, body := socksGet(t, saddr, "db.corp.test", 5432); code != 0 || body != "upstream tunnel to db.corp.test:5432: GET /inside" {
		t.Errorf("socks: %x %q", code, body)
	}
	// Refused by srt: the parent never hears of it.
	if resp, _ := get(t, tb.client("srt", "tok"), "http://evil.corp.test/"); resp.StatusCode != 403 {
		t.Errorf("denied: %d", resp.StatusCode)
	}
	if status, _ := connectGet(t, tb.proxyAddr, "nowhere.test:443"); !strings.HasPrefix(status, "403") {
		t.Errorf("unlisted: %s", status)
	}
	// NO_PROXY and loopback: direct (through the guard).
	resp, body = get(t, tb.client("srt", "tok"), fmt.Sprintf("http://127.0.0.1:%d/lo", tb.port))
	if resp.StatusCode != 200 || !strings.HasPrefix(body, "hello 127.0.0.1") {
		t.Errorf("loopback: %d %q", resp.StatusCode, body)
	}
	if resp, _ := get(t, tb.client("srt", "tok"), "http://direct.test/"); resp.StatusCode != 502 {
		t.Errorf("NO_PROXY (direct, does not resolve): %d", resp.StatusCode)
	}
	want := []string{
		"GET http://app.corp.test:8080/a?b " + auth,
		"CONNECT app.corp.test:443 " + auth,
		"CONNECT db.corp.test:5432 " + auth,
	}
	if got := parent.log(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the parent saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tb.mu.Lock()
	resolved := strings.Join(tb.resolved, " ")
	tb.mu.Unlock()
	if resolved != "direct.test" {
		t.Errorf("srt resolved %q; only the NO_PROXY name should be", resolved)
	}
	// A parent that refuses the CONNECT: the client gets 502, SOCKS 0x04.
	parent.status = 407
	if status, _ := connectGet(t, tb.proxyAddr, "app.corp.test:443"); status != "502 Bad Gateway" {
		t.Errorf("parent refused: %s", status)
	}
	if code, _ := socksGet(t, saddr, "db.corp.test", 5432); code != 0x04 {
		t.Errorf("socks, parent refused: %x", code)
	}
}

// TestMitmProxy: the mitmProxy domains go to the proxy on the Unix socket
// (CONNECT there, plain HTTP in absolute form), after srt's lists; the
// others as before; when the socket fails, there is no fallback.
func TestMitmProxy(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "*.inspect.test", "other.test"}, []string{"evil.inspect.test"}, nil)
	sock := filepath.Join(t.TempDir(), "mitm.sock")
	mitm, _ := startUpstreamProxy(t, "unix", sock)
	parent, paddr := startUpstreamProxy(t, "tcp", "127.0.0.1:0")
	tb.egress.Parent, _ = ParentFrom("http://"+paddr, "", "", func(string) string { return "" })
	route := &Mitm{SocketPath: sock, Domains: patterns(t, "*.inspect.test")}
	tb.egress.Mitm = func() *Mitm { return route }

	resp, body := get(t, tb.client("srt", "tok"), "http://a.inspect.test/x")
	if resp.StatusCode != 200 || body != "upstream proxy: GET http://a.inspect.test/x host=a.inspect.test" {
		t.Errorf("plain: %d %q", resp.StatusCode, body)
	}
	if status, body := connectGet(t, tb.proxyAddr, "a.inspect.test:443"); body != "upstream tunnel to a.inspect.test:443: GET /inside" {
		t.Errorf("connect: %s %q", status, body)
	}
	if code, body := socksGet(t, tb.socks(t), "b.inspect.test", 443); code != 0 || body != "upstream tunnel to b.inspect.test:443: GET /inside" {
		t.Errorf("socks: %x %q", code, body)
	}
	if resp, _ := get(t, tb.client("srt", "tok"), "http://evil.inspect.test/"); resp.StatusCode != 403 {
		t.Errorf("denied: %d", resp.StatusCode)
	}
	// Not a mitm domain: the parent proxy.
	if resp, body := get(t, tb.client("srt", "tok"), "http://other.test/"); resp.StatusCode != 200 || !strings.HasPrefix(body, "upstream proxy: GET http://other.test/") {
		t.Errorf("other: %d %q", resp.StatusCode, body)
	}
	want := []string{
		`GET http://a.inspect.test/x auth=""`,
		`CONNECT a.inspect.test:443 auth=""`,
		`CONNECT b.inspect.test:443 auth=""`,
	}
	if got := mitm.log(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the mitm proxy saw:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The socket fails: 502, and neither the parent nor a direct dial.
	before := len(parent.log())
	route = &Mitm{SocketPath: filepath.Join(t.TempDir(), "gone.sock"), Domains: patterns(t, "*.inspect.test")}
	if status, _ := connectGet(t, tb.proxyAddr, "a.inspect.test:443"); status != "502 Bad Gateway" {
		t.Errorf("socket gone: %s", status)
	}
	if resp, _ := get(t, tb.client("srt", "tok"), "http://a.inspect.test/x"); resp.StatusCode != 502 {
		t.Errorf("socket gone, plain: %d", resp.StatusCode)
	}
	if len(parent.log()) != before {
		t.Errorf("fell back to the parent: %v", parent.log())
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, h := range tb.resolved {
		if strings.HasSuffix(h, "inspect.test") {
			t.Errorf("srt resolved a mitm host: %s", h)
		}
	}
}

// socksGet connects through srt's SOCKS proxy and, when it succeeds,
// sends one GET inside; it returns the reply code and the body.
func socksGet(t *testing.T, addr, host string, port int) (byte, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(append(append([]byte{5, 1, 2}, userPass("srt", "tok")...), connectName(host, port)...))
	rep := make([]byte, 2+2+10)
	if _, err := io.ReadFull(c, rep[:6]); err != nil {
		t.Fatalf("socks %s: %v (%x)", host, err, rep)
	}
	if rep[5] != 0 {
		return rep[5], ""
	}
	io.ReadFull(c, rep[6:])
	fmt.Fprintf(c, "GET /inside HTTP/1.1\r\nHost: %s\r\n\r\n", host)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("inside %s: %v", host, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return 0, string(b)
}

// TestParentProxyTLS: an https parent is spoken to over TLS, its
// certificate checked; one that does not verify fails the connection.
func TestParentProxyTLS(t *testing.T) {
	tb := newTestbed(t, []string{"*.corp.test"}, nil, nil)
	parent := &upstreamProxy{}
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	srv.Listener.Close() // only its certificate is used
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := tls.NewListener(l, srv.TLS)
	t.Cleanup(func() { tl.Close() })
	go parent.serve(tl)
	p, _ := ParentFrom("https://"+tl.Addr().String(), "", "", func(string) string { return "" })
	tb.egress.Parent = p
	// Not trusted: 502.
	if status, _ := connectGet(t, tb.proxyAddr, "app.corp.test:443"); status != "502 Bad Gateway" {
		t.Errorf("untrusted parent: %s", status)
	}
	p.RootCAs = srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	if status, body := connectGet(t, tb.proxyAddr, "app.corp.test:443"); body != "upstream tunnel to app.corp.test:443: GET /inside" {
		t.Errorf("trusted parent: %s %q", status, body)
	}
	if resp, body := get(t, tb.client("srt", "tok"), "http://app.corp.test/p"); resp.StatusCode != 200 || body != "upstream proxy: GET http://app.corp.test/p host=app.corp.test" {
		t.Errorf("plain through the https parent: %d %q", resp.StatusCode, body)
	}
	if got := parent.log(); len(got) != 2 {
		t.Errorf("the parent saw %q", got)
	}
}
