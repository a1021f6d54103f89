package proxy

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// testbed is a backend on loopback and a proxy whose policy allows the
// backend's literal address and port, and vm.test, which resolves to it.
type testbed struct {
	egress    *Egress
	backend   *httptest.Server
	port      int
	proxyAddr string
	events    []Event
	resolved  []string // every name looked up
	mu        sync.Mutex
}

func newTestbed(t *testing.T, allowed, denied []string, reasons map[string]string) *testbed {
	t.Helper()
	tb := &testbed{}
	tb.backend = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "" || r.Header.Get("Proxy-Connection") != "" || r.Header.Get("X-Hop") != "" {
			t.Errorf("hop-by-hop or proxy header forwarded: %v", r.Header)
		}
		fmt.Fprintf(w, "hello %s %s", r.Host, r.URL.Path)
	}))
	t.Cleanup(tb.backend.Close)
	u, _ := url.Parse(tb.backend.URL)
	fmt.Sscan(u.Port(), &tb.port)
	for i, a := range allowed {
		allowed[i] = strings.ReplaceAll(a, "PORT", u.Port())
	}
	al, err := policy.ParseHostList(allowed)
	if err != nil {
		t.Fatal(err)
	}
	dl, err := policy.ParseHostList(denied)
	if err != nil {
		t.Fatal(err)
	}
	rules := &netpolicy.Rules{Allowed: al, Denied: dl, DeniedReasons: reasons, Source: "/p/.srt-settings.json"}
	e := &Egress{
		Token: "tok",
		Rules: func() *netpolicy.Rules { return rules },
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			tb.mu.Lock()
			tb.resolved = append(tb.resolved, host)
			tb.mu.Unlock()
			switch host {
			case "vm.test":
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			case "public.test":
				return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
			}
			return nil, errors.New("no such host")
		},
		OnDecision: func(v Event) { tb.mu.Lock(); tb.events = append(tb.events, v); tb.mu.Unlock() },
	}
	tb.egress = e
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go (&HTTP{Egress: e}).Serve(context.Background(), l)
	tb.proxyAddr = l.Addr().String()
	return tb
}

func (tb *testbed) client(user, pass string) *http.Client {
	proxy := &url.URL{Scheme: "http", Host: tb.proxyAddr}
	if user != "" {
		proxy.User = url.UserPassword(user, pass)
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxy)}}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "1")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// The explanations a refusal's body carries after the reference's line:
// the srt sandbox refused, which rule decided, which file to edit.
const (
	deniedWhy   = `srt sandbox refused evil.test:80: it matches "evil.test" in network.deniedDomains, which wins over network.allowedDomains. To allow it, remove that entry from network.deniedDomains in /p/.srt-settings.json.`
	unlistedWhy = `srt sandbox refused nowhere.test:80: it is not in network.allowedDomains. To allow it, add "nowhere.test" to network.allowedDomains in /p/.srt-settings.json.`
	guardWhy    = `srt sandbox refused vm.test:1: network.allowedDomains allows it ("vm.test"), but it resolved to a loopback address, which the resolved-address guard refuses. To allow that address, list it literally in network.allowedDomains in /p/.srt-settings.json ("127.0.0.1:1").`
)

func TestHTTPPlain(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test"}, []string{"evil.test"}, nil)
	c := tb.client("srt.cmd1", "tok")
	port := tb.port

	resp, body := get(t, c, fmt.Sprintf("http://127.0.0.1:%d/a", port))
	if resp.StatusCode != 200 || body != fmt.Sprintf("hello 127.0.0.1:%d /a", port) {
		t.Errorf("allowed literal: %d %q", resp.StatusCode, body)
	}
	// A name that resolves to the allow-listed literal on that port.
	resp, body = get(t, c, fmt.Sprintf("http://VM.test.:%d/b", port))
	if resp.StatusCode != 200 || body != fmt.Sprintf("hello vm.test:%d /b", port) {
		t.Errorf("allowed name: %d %q", resp.StatusCode, body)
	}
	// The same name on another port resolves to loopback: the guard refuses.
	resp, body = get(t, c, "http://vm.test:1/")
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != "blocked-by-sandbox-runtime" || body != "Connection to vm.test blocked: resolved to a loopback address\n"+guardWhy+"\n" {
		t.Errorf("guard: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	resp, body = get(t, c, "http://evil.test/")
	if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != "blocked-by-allowlist" || body != "Connection blocked by network allowlist\n"+deniedWhy+"\n" {
		t.Errorf("denied: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	resp, body = get(t, c, "http://nowhere.test/")
	if resp.StatusCode != 403 || body != "Connection blocked by network allowlist\n"+unlistedWhy+"\n" {
		t.Errorf("unlisted: %d %q", resp.StatusCode, body)
	}
	tb.mu.Lock()
	got := []string{}
	for _, v := range tb.events {
		if v.Allow {
			got = append(got, fmt.Sprintf("allow %s %s:%d rule=%s %s", v.Proxy, v.Host, v.Port, v.Rule, v.CommandID))
		} else {
			got = append(got, v.Line()+" "+v.Stage+" "+v.CommandID)
		}
	}
	tb.mu.Unlock()
	want := []string{
		fmt.Sprintf("allow http 127.0.0.1:%d rule=127.0.0.1:%d cmd1", port, port),
		fmt.Sprintf("allow http VM.test.:%d rule=vm.test cmd1", port),
		"deny network-outbound vm.test:1 (resolved to a loopback address) guard cmd1",
		"deny network-outbound evil.test:80 (host is on the deny list) policy cmd1",
		"deny network-outbound nowhere.test:80 (host is not on the allow list) policy cmd1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestHTTPAuth(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT"}, nil, nil)
	u := fmt.Sprintf("http://127.0.0.1:%d/", tb.port)
	for _, cred := range [][2]string{{"", ""}, {"srt", "wrong"}, {"", "tok"}} {
		resp, _ := get(t, tb.client(cred[0], cred[1]), u)
		if resp.StatusCode != 407 || resp.Header.Get("Proxy-Authenticate") != `Basic realm="srt"` {
			t.Errorf("credentials %q: %d %v", cred, resp.StatusCode, resp.Header)
		}
	}
	if resp, _ := get(t, tb.client("anyone", "tok"), u); resp.StatusCode != 200 {
		t.Errorf("any non-empty user with the token: %d", resp.StatusCode)
	}
}

// rawConnect sends a CONNECT and returns the raw reply head and body.
func rawConnect(t *testing.T, addr, target, auth string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target)
	if auth != "" {
		fmt.Fprintf(c, "Proxy-Authorization: Basic %s\r\n", base64.StdEncoding.EncodeToString([]byte(auth)))
	}
	fmt.Fprint(c, "\r\n")
	return "", c
}

func readAll(t *testing.T, c net.Conn) string {
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestCONNECT(t *testing.T) {
	tb := newTestbed(t, []string{"127.0.0.1:PORT", "vm.test"}, []string{"evil.test"}, map[string]string{"evil.test": "known exfiltration <host> é"})
	auth := "srt:tok"

	// Allowed: the tunnel carries a request to the backend, and bytes
	// pipelined after the CONNECT head are forwarded.
	_, c := rawConnect(t, tb.proxyAddr, fmt.Sprintf("127.0.0.1:%d", tb.port), auth)
	fmt.Fprintf(c, "GET /t HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	blank, _ := br.ReadString('\n')
	if status != "HTTP/1.1 200 Connection Established\r\n" || blank != "\r\n" {
		t.Fatalf("CONNECT reply %q %q", status, blank)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "hello x /t" {
		t.Errorf("through the tunnel: %q", b)
	}

	tests := []struct {
		target, auth, want string
	}{
		{"evil.test:443", auth, "HTTP/1.1 403 known exfiltration host ?\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist\n" + strings.ReplaceAll(deniedWhy, ":80", ":443")},
		{"other.test:443", auth, "HTTP/1.1 403 host is not on the allow list\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist\n" + strings.NewReplacer("nowhere.test", "other.test", ":80", ":443").Replace(unlistedWhy)},
		{"vm.test:22", auth, "HTTP/1.1 403 resolved to a loopback address\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\nConnection to vm.test blocked: resolved to a loopback address\n" + strings.ReplaceAll(strings.ReplaceAll(guardWhy, ":1", ":22"), `"vm.test:22"`, `"vm.test"`)},
		{"127.0.0.1:443", "", "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"srt\"\r\n\r\n"},
		{"example.com", auth, "HTTP/1.1 400 Bad Request\r\n\r\n"},
		{"example.com:0", auth, "HTTP/1.1 400 Bad Request\r\n\r\n"},
	}
	// An unbracketed IPv6 target never reaches the handler: Go's server
	// answers 400 itself.
	_, c = rawConnect(t, tb.proxyAddr, "::1:443", auth)
	if got := readAll(t, c); !strings.HasPrefix(got, "HTTP/1.1 400 Bad Request\r\n") {
		t.Errorf("CONNECT ::1:443: %q", got)
	}
	for _, tt := range tests {
		_, c := rawConnect(t, tb.proxyAddr, tt.target, tt.auth)
		if got := readAll(t, c); got != tt.want {
			t.Errorf("CONNECT %s:\n got %q\nwant %q", tt.target, got, tt.want)
		}
	}
}

func TestCONNECTDialFailure(t *testing.T) {
	tb := newTestbed(t, []string{"unresolvable.test", "127.0.0.1"}, nil, nil)
	_, c := rawConnect(t, tb.proxyAddr, "unresolvable.test:443", "srt:tok")
	if got := readAll(t, c); got != "HTTP/1.1 502 Bad Gateway\r\n\r\n" {
		t.Errorf("DNS failure: %q", got)
	}
	// Nothing listens on port 1.
	_, c = rawConnect(t, tb.proxyAddr, "127.0.0.1:1", "srt:tok")
	if got := readAll(t, c); got != "HTTP/1.1 502 Bad Gateway\r\n\r\n" {
		t.Errorf("refused: %q", got)
	}
}

func TestOriginForm(t *testing.T) {
	tb := newTestbed(t, nil, nil, nil)
	req, _ := http.NewRequest("GET", "http://"+tb.proxyAddr+"/x", nil)
	req.SetBasicAuth("srt", "tok")
	req.Header.Set("Proxy-Authorization", req.Header.Get("Authorization"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("origin-form: %d", resp.StatusCode)
	}
}

func mustRule(t *testing.T, entry string) policy.HostRule {
	t.Helper()
	r, err := policy.ParseHostRule(entry)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
