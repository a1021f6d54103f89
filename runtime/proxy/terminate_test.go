package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

const (
	testReal     = "REAL-SECRET-0123456789abcdefghijklmnopqrstuvwxyz"
	testSentinel = "fake_value_0123456789abcdef0123456789abcdef_abcd"
)

// tlsbed is an HTTPS upstream on loopback, signed by its own CA and
// answering for any name, behind a proxy that terminates TLS with another
// CA. Every name resolves to a documentation address that the dialer
// sends to the upstream.
type tlsbed struct {
	proxyAddr  string
	socksAddr  string
	upstreamCA *CA
	runCA      *CA
	term       *Terminator
	upAddr     string
	// inject is the proxies' injector: one secret, TOKEN, injected into
	// inject.test (a test may change it before its requests).
	inject *Injector
	// refused collects the refusals the proxies record.
	mu      sync.Mutex
	refused []Event
}

// refusals returns the refusals recorded so far.
func (tb *tlsbed) refusals() []Event {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]Event(nil), tb.refused...)
}

// serveUpstream serves h over HTTPS on loopback, with a leaf for each
// name a client asks signed by a CA of its own, until the test ends.
func serveUpstream(tb testing.TB, h http.Handler) (addr string, ca *CA) {
	ca, err := NewCA()
	if err != nil {
		tb.Fatal(err)
	}
	up := &Terminator{CA: ca}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) { return up.Leaf(h.ServerName) },
	})
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	tb.Cleanup(func() { srv.Close() })
	return l.Addr().String(), ca
}

func newTLSBed(t testing.TB, handler http.Handler) *tlsbed {
	upAddr, upCA := serveUpstream(t, handler)
	runCA, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(upCA.Cert)
	exclude, _ := policy.ParseHostList([]string{"opaque.test"})
	tb := &tlsbed{upstreamCA: upCA, runCA: runCA, upAddr: upAddr}
	tb.term = &Terminator{CA: runCA, Roots: roots, Exclude: func() policy.HostList { return exclude }}
	e := tlsEgress(&tb.upAddr, tb.term)
	e.OnDecision = func(ev Event) {
		if !ev.Allow {
			tb.mu.Lock()
			tb.refused = append(tb.refused, ev)
			tb.mu.Unlock()
		}
	}
	e.Inject = &Injector{Secrets: []Secret{{
		Name: "TOKEN", Setting: "credentials.envVars[0]", Sentinel: testSentinel, Real: testReal,
		Inject: func(h string) bool { return h == "inject.test" || h == "store.test" },
	}}}
	tb.inject = e.Inject
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go (&HTTP{Egress: e}).Serve(context.Background(), pl)
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go (&SOCKS{Egress: e}).Serve(context.Background(), sl)
	t.Cleanup(func() { pl.Close(); sl.Close() })
	tb.proxyAddr = pl.Addr().String()
	tb.socksAddr = sl.Addr().String()
	return tb
}

// tlsEgress is an egress that allows every *.test host, resolves each to a
// documentation address and dials the address upAddr holds at the time
// instead (a test may point it elsewhere), terminating TLS with term.
func tlsEgress(upAddr *string, term *Terminator) *Egress {
	allowed, _ := policy.ParseHostList([]string{"*.test"})
	rules := &netpolicy.Rules{Allowed: allowed}
	return &Egress{
		Token: "tok",
		Rules: func() *netpolicy.Rules { return rules },
		Resolve: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("192.0.2.1")}, nil
		},
		Dial: func(ctx context.Context, _ netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", *upAddr)
		},
		TLS: term,
	}
}

func (tb *tlsbed) client(trust *CA, socks bool) *http.Client {
	roots := x509.NewCertPool()
	roots.AddCert(trust.Cert)
	proxy := &url.URL{Scheme: "http", User: url.UserPassword("srt", "tok"), Host: tb.proxyAddr}
	if socks {
		proxy = &url.URL{Scheme: "socks5", User: url.UserPassword("srt", "tok"), Host: tb.socksAddr}
	}
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxy),
		TLSClientConfig: &tls.Config{RootCAs: roots},
	}}
}

// echo answers with what it received: the Authorization header and the
// body, in a header and in the body.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Echo", r.Header.Get("Authorization"))
	fmt.Fprintf(w, "auth=%s body=%s", r.Header.Get("Authorization"), body)
})

func TestTerminateInjects(t *testing.T) {
	tb := newTLSBed(t, echo)
	for _, socks := range []bool{false, true} {
		c := tb.client(tb.runCA, socks)
		for _, tc := range []struct {
			host   string
			inject bool
		}{{"inject.test", true}, {"other.test", false}} {
			req, _ := http.NewRequest("POST", "https://"+tc.host+"/", strings.NewReader("x="+testSentinel+"&y=1"))
			req.Header.Set("Authorization", "Bearer "+testSentinel)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("socks=%v %s: %v", socks, tc.host, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got := resp.TLS.PeerCertificates[0].Issuer.CommonName; got != tb.runCA.Cert.Subject.CommonName {
				t.Errorf("%s: leaf issued by %q, want the run's CA", tc.host, got)
			}
			// The command never sees the real value, even echoed back.
			if strings.Contains(string(body), testReal) || strings.Contains(resp.Header.Get("X-Echo"), testReal) {
				t.Errorf("%s: real value reached the client: %q %q", tc.host, body, resp.Header.Get("X-Echo"))
			}
			want := "auth=Bearer " + testSentinel + " body=x=" + testSentinel + "&y=1"
			if string(body) != want {
				t.Errorf("%s: body %q, want %q", tc.host, body, want)
			}
		}
	}
}

// The upstream sees the real value only at an inject host, and there
// only in the header fields that carry credentials, unless the host is
// one of the secret's bodyInjectHosts (store.test here); each stand-in
// left in an inject host's request is recorded once per place.
func TestTerminateUpstreamSees(t *testing.T) {
	got := make(chan string, 4)
	tb := newTLSBed(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r.Host + " " + r.Header.Get("Authorization") + " " + r.Header.Get("X-Note") + " " + string(body)
	}))
	tb.inject.Secrets[0].BodyInject = func(h string) bool { return h == "store.test" }
	c := tb.client(tb.runCA, false)
	for _, host := range []string{"inject.test", "other.test", "store.test"} {
		req, _ := http.NewRequest("POST", "https://"+host+"/?q="+testSentinel, strings.NewReader(testSentinel))
		req.Header.Set("Authorization", "Bearer "+testSentinel)
		req.Header.Set("X-Note", testSentinel)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, want := range []string{
		"inject.test Bearer " + testReal + " " + testSentinel + " " + testSentinel,
		"other.test Bearer " + testSentinel + " " + testSentinel + " " + testSentinel,
		"store.test Bearer " + testReal + " " + testReal + " " + testReal,
	} {
		if s := <-got; s != want {
			t.Errorf("the upstream received %q, want %q", s, want)
		}
	}
	var lines []string
	for _, ev := range tb.refusals() {
		lines = append(lines, ev.Line())
	}
	want := []string{
		"deny credential-inject inject.test:443 (TOKEN: the stand-in was sent in the X-Note header, not the real value)",
		"deny credential-inject inject.test:443 (TOKEN: the stand-in was sent in the URL, not the real value)",
		"deny credential-inject inject.test:443 (TOKEN: the stand-in was sent in the request body, not the real value)",
		"deny credential-inject store.test:443 (TOKEN: the stand-in was sent in the URL, not the real value)",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if ev := tb.refusals(); len(ev) > 2 {
		wantWhy := `srt sandbox refused to put the real value of TOKEN in the body of a request to inject.test:443 (it sent the stand-in): a real value goes only into the request headers that carry credentials (Authorization, Cookie, X-Api-Key, …), since a host may keep anything else and the command could read it back. If inject.test needs the value there, add "inject.test" to credentials.envVars[0].bodyInjectHosts in the settings file (whatever that host keeps, the command can then read back).`
		if ev[2].Why != wantWhy || ev[2].Stage != StageCredential || ev[2].Allow {
			t.Errorf("the body's event: %+v\nwant why %s", ev[2], wantWhy)
		}
	}
}

// An excluded host is an opaque tunnel: the client sees the upstream's
// own certificate.
func TestTerminateExcluded(t *testing.T) {
	tb := newTLSBed(t, echo)
	resp, err := tb.client(tb.upstreamCA, false).Get("https://opaque.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.TLS.PeerCertificates[0].Issuer.CommonName; got != tb.upstreamCA.Cert.Subject.CommonName {
		t.Errorf("issuer %q, want the upstream's CA", got)
	}
	// Terminated hosts are not trusted with the upstream's CA alone.
	if _, err := tb.client(tb.upstreamCA, false).Get("https://other.test/"); err == nil {
		t.Error("a terminated host verified against the upstream CA")
	}
}

func TestTerminateSNIMismatch(t *testing.T) {
	tb := newTLSBed(t, echo)
	c, _, err := connectThrough(tb.proxyAddr, "inject.test:443")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roots := x509.NewCertPool()
	roots.AddCert(tb.runCA.Cert)
	tc := tls.Client(c, &tls.Config{ServerName: "other.test", RootCAs: roots})
	if err := tc.Handshake(); err == nil {
		t.Fatal("a ClientHello for other.test was terminated in a tunnel to inject.test")
	}
}

func TestTerminateOverCap(t *testing.T) {
	tb := newTLSBed(t, echo)
	tb.term.MaxTunnels = func() int { return 1 }
	c, br, err := connectThrough(tb.proxyAddr, "inject.test:443")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = br
	roots := x509.NewCertPool()
	roots.AddCert(tb.runCA.Cert)
	tc := tls.Client(c, &tls.Config{ServerName: "inject.test", RootCAs: roots})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	c2, err := net.Dial("tcp", tb.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	fmt.Fprintf(c2, "CONNECT other.test:443 HTTP/1.1\r\nHost: other.test:443\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c2), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || resp.Header.Get("X-Proxy-Error") != "too-many-tunnels" || string(body) != "too many TLS-terminated tunnels at once" {
		t.Errorf("over the cap: %d %v %q", resp.StatusCode, resp.Header, body)
	}
	// An excluded host is not counted.
	c3, _, err := connectThrough(tb.proxyAddr, "opaque.test:443")
	if err != nil {
		t.Errorf("excluded host over the cap: %v", err)
	} else {
		c3.Close()
	}
	// Closing the first tunnel frees its place.
	tc.Close()
	deadline := time.Now().Add(5 * time.Second)
	for tb.term.active.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := tb.term.active.Load(); n != 0 {
		t.Errorf("%d tunnels still counted after close", n)
	}
}

// A tunnel whose client does not speak TLS is opaque.
func TestTerminatePlainTunnel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		// A server that speaks first.
		io.WriteString(c, "SSH-2.0-test\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "got "+line)
	}()
	tb := newTLSBed(t, echo)
	tb.upAddr = l.Addr().String()
	c, br, err := connectThrough(tb.proxyAddr, "ssh.test:22")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	greeting, err := br.ReadString('\n')
	if err != nil || greeting != "SSH-2.0-test\r\n" {
		t.Fatalf("greeting %q %v", greeting, err)
	}
	io.WriteString(c, "hello\n")
	if got, _ := br.ReadString('\n'); got != "got hello\n" {
		t.Errorf("reply %q", got)
	}
}

func TestLoadCA(t *testing.T) {
	a, _ := NewCA()
	b, _ := NewCA()
	keyA := mustKeyPEM(t, a)
	if _, err := LoadCA(a.PEM, keyA); err != nil {
		t.Errorf("matching pair: %v", err)
	}
	if _, err := LoadCA(b.PEM, keyA); err == nil || !strings.Contains(err.Error(), "does not belong") {
		t.Errorf("mismatched pair: %v", err)
	}
	if _, err := LoadCA([]byte("junk"), keyA); err == nil {
		t.Error("junk certificate accepted")
	}
}

func mustKeyPEM(t *testing.T, ca *CA) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}
