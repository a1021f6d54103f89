package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
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
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/runtime/proxy/decider"
)

// testDecider is the decider's end of a link: it answers each frame with
// what answer returns (raw JSON frames), and keeps the frames it got.
type testDecider struct {
	mu     sync.Mutex
	frames []string
	conn   net.Conn
}

func (d *testDecider) got() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.frames...)
}

func (d *testDecider) send(frame string) { decider.WriteFrame(d.conn, []byte(frame)) }

// filterBed runs a filtered proxy whose decider answers with answer, and
// returns the proxy's address.
type filterBed struct {
	addr string
	dec  *testDecider
	link *decider.Link
	f    *Filter
}

func newFilterBed(t *testing.T, hello string, term *Terminator, answer func(d *testDecider, frame []byte) []string) *filterBed {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	pc, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	d := &testDecider{conn: dc}
	go func() {
		if b, err := decider.ReadFrame(dc, decider.MaxFrame); err != nil || string(b) != string(decider.ProxyHello) {
			t.Errorf("proxy hello = %q, %v", b, err)
		}
		d.send(hello)
		for {
			b, err := decider.ReadFrame(dc, decider.MaxBodyFrame)
			if err != nil {
				return
			}
			d.mu.Lock()
			d.frames = append(d.frames, string(b))
			d.mu.Unlock()
			for _, f := range answer(d, b) {
				d.send(f)
			}
		}
	}()
	link, h, err := decider.Open(pc, pc)
	if err != nil {
		t.Fatal(err)
	}
	allowed, _ := policy.ParseHostList(h.AllowedDomains)
	denied, _ := policy.ParseHostList(h.DeniedDomains)
	rules := &netpolicy.Rules{Allowed: allowed, Denied: denied}
	f := &Filter{Decider: link}
	e := &Egress{
		Rules:  func() *netpolicy.Rules { return rules },
		Listed: func() []netip.Prefix { return FilterDeniedRanges },
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			switch host {
			case "loop.test":
				return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
			case "private.test":
				return []netip.Addr{netip.MustParseAddr("10.1.2.3")}, nil
			}
			return nil, fmt.Errorf("%s: no such host", host)
		},
		TLS:    term,
		Filter: f,
	}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go (&HTTP{Egress: e}).Serve(context.Background(), pl)
	t.Cleanup(func() { pl.Close(); dc.Close(); pc.Close(); link.Close() })
	return &filterBed{addr: pl.Addr().String(), dec: d, link: link, f: f}
}

// verdictFor answers every req with the verdict text (its id filled in).
func verdictFor(text string) func(*testDecider, []byte) []string {
	return func(_ *testDecider, b []byte) []string {
		var m struct{ ID uint64 }
		json.Unmarshal(b, &m)
		return []string{fmt.Sprintf(`{"t":"verdict","id":%d,%s}`, m.ID, text)}
	}
}

// roundTrip sends raw on a new connection and reads one response.
func roundTrip(t *testing.T, addr, raw string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, raw)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", raw, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// upstream echoes what it received as JSON: method, target, headers, body.
func upstream(t *testing.T) (*httptest.Server, string) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := r.Header.Clone()
		h.Set("Host", r.Host)
		w.Header().Set("X-Secret", "s")
		w.Header().Set("X-Kept", "k")
		json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "uri": r.RequestURI, "header": h, "body": string(b)})
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

type echoed struct {
	Method, URI, Body string
	Header            http.Header
}

func decode(t *testing.T, body string) echoed {
	var e echoed
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("upstream answer %q: %v", body, err)
	}
	return e
}

const helloLocal = `{"t":"hello","proto":1,"allowedDomains":["127.0.0.1","loop.test","private.test"],"deniedDomains":["bad.test"]}`

func TestProxyFilterRefusals(t *testing.T) {
	_, up := upstream(t)
	port := up[strings.LastIndexByte(up, ':')+1:]
	bed := newFilterBed(t, helloLocal, nil, func(d *testDecider, b []byte) []string {
		q, err := decider.ParseReq(b)
		if err != nil {
			return nil
		}
		switch q.Path {
		case "/deny":
			return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"deny","status":451,"reason":"not here"}`, q.ID)}
		case "/set":
			return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow","setHeaders":{"x-added":"1"}}`, q.ID)}
		}
		return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow"}`, q.ID)}
	})
	many := strings.Repeat("X-Many: 1\r\n", 191)
	for _, tc := range []struct {
		name, raw  string
		status     int
		code, body string
		decided    bool
	}{
		{"host not allowed", "GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n", 403, "host_not_allowed", "Connection blocked by network allowlist\n", false},
		{"deny list", "GET http://bad.test/ HTTP/1.1\r\nHost: bad.test\r\n\r\n", 403, "host_not_allowed", "Connection blocked by network allowlist\n", false},
		{"decider deny", "GET http://" + up + "/deny HTTP/1.1\r\nHost: " + up + "\r\n\r\n", 451, "decider", "not here\n", true},
		{"plaintext header set", "GET http://" + up + "/set HTTP/1.1\r\nHost: " + up + "\r\n\r\n", 403, "plaintext_header_set", "", true},
		{"misdirected", "GET http://" + up + "/x HTTP/1.1\r\nHost: other.com\r\n\r\n", 421, "misdirected", "Host header does not match the request target\n", false},
		{"misdirected port", "GET http://" + up + "/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 421, "misdirected", "", false},
		{"trace", "TRACE http://" + up + "/x HTTP/1.1\r\nHost: " + up + "\r\n\r\n", 405, "method_refused", "the TRACE method is not forwarded\n", false},
		{"track", "TRACK http://" + up + "/x HTTP/1.1\r\nHost: " + up + "\r\n\r\n", 405, "method_refused", "", false},
		{"origin form", "GET /x HTTP/1.1\r\nHost: " + up + "\r\n\r\n", 400, "bad_request", "", false},
		{"non-ascii host", "GET http://" + up + "/x HTTP/1.1\r\nHost: bücher.example\r\n\r\n", 400, "bad_request", "", false},
		{"too many headers", "GET http://" + up + "/x HTTP/1.1\r\nHost: " + up + "\r\n" + many + "\r\n", 400, "bad_request", "", false},
		{"get with body", "GET http://" + up + "/x HTTP/1.1\r\nHost: " + up + "\r\nContent-Length: 3\r\n\r\nabc", 403, "bodyless_method_body", "", false},
		{"guard loopback", "GET http://loop.test:" + port + "/x HTTP/1.1\r\nHost: loop.test:" + port + "\r\n\r\n", 403, "address_not_allowed", "Connection to loop.test blocked: resolved to a loopback address\n", true},
		{"guard private", "GET http://private.test/x HTTP/1.1\r\nHost: private.test\r\n\r\n", 403, "address_not_allowed", "Connection to private.test blocked: resolved to a listed address\n", true},
		{"connect without a CA", "CONNECT " + up + " HTTP/1.1\r\nHost: " + up + "\r\n\r\n", 403, "opaque_tunnel", "this proxy does not tunnel CONNECTs it cannot inspect", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(bed.dec.got())
			resp, body := roundTrip(t, bed.addr, tc.raw)
			if resp.StatusCode != tc.status || resp.Header.Get("X-Deny-Reason") != tc.code {
				t.Fatalf("%q = %s, X-Deny-Reason %q; want %d, %q (body %q)", tc.raw[:20], resp.Status, resp.Header.Get("X-Deny-Reason"), tc.status, tc.code, body)
			}
			if tc.body != "" && body != tc.body {
				t.Errorf("body = %q, want %q", body, tc.body)
			}
			if asked := len(bed.dec.got()) > before; asked != tc.decided {
				t.Errorf("decider asked = %v, want %v", asked, tc.decided)
			}
		})
	}
	resp, _ := roundTrip(t, bed.addr, "GET http://"+up+"/deny HTTP/1.1\r\nHost: "+up+"\r\n\r\n")
	if resp.Status != "451 Unavailable For Legal Reasons" {
		t.Errorf("status line = %q", resp.Status)
	}
}

func TestProxyFilterHeadTooLarge(t *testing.T) {
	bed := newFilterBed(t, helloLocal, nil, verdictFor(`"action":"allow"`))
	resp, _ := roundTrip(t, bed.addr, "GET http://127.0.0.1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "+strings.Repeat("a", 2<<20)+"\r\n\r\n")
	if resp.StatusCode != 431 || resp.Header.Get("X-Deny-Reason") != "bad_request" {
		t.Fatalf("2 MiB head = %s %q", resp.Status, resp.Header.Get("X-Deny-Reason"))
	}
}

// TestProxyFilterReqFrame pins the req frame of a plain request, and the
// forwarding: the target as spelled, the hop-by-hop headers gone in any
// spelling, Connection-named headers gone.
func TestProxyFilterReqFrame(t *testing.T) {
	_, up := upstream(t)
	port := up[strings.LastIndexByte(up, ':')+1:]
	bed := newFilterBed(t, helloLocal, nil, verdictFor(`"action":"allow","removeHeaders":["x-gone"]`))
	resp, body := roundTrip(t, bed.addr, "GET http://"+up+"/ok?x=1 HTTP/1.1\r\nHost: "+up+"\r\n\r\n")
	if resp.StatusCode != 200 {
		t.Fatalf("GET = %s %q", resp.Status, body)
	}
	want := `{"t":"req","id":1,"method":"GET","host":"127.0.0.1","port":` + port + `,"hostHeader":"` + up + `","path":"/ok","query":"x=1"}`
	if got := bed.dec.got(); len(got) != 1 || got[0] != want {
		t.Fatalf("frames = %q, want %q", got, want)
	}
	raw := "GET http://" + up + "/a/../b/%7e?q=%41&r HTTP/1.1\r\nHost: " + up + "\r\nConnection: keep-alive, X-Named\r\nX_Named: 1\r\nKeep_Alive: 1\r\nProxy.Connection: 1\r\nproxy-authorization: Basic eA==\r\nX-Gone: 1\r\nX-Keep: yes\r\n\r\n"
	_, body = roundTrip(t, bed.addr, raw)
	e := decode(t, body)
	if e.URI != "/a/../b/%7e?q=%41&r" {
		t.Errorf("upstream target = %q, want as spelled", e.URI)
	}
	for _, h := range []string{"X_named", "Keep_alive", "Proxy.connection", "Proxy-Authorization", "X-Gone", "Connection"} {
		if v := e.Header.Get(h); v != "" {
			t.Errorf("upstream got %s: %q", h, v)
		}
	}
	if e.Header.Get("X-Keep") != "yes" || e.Header.Get("Host") != up {
		t.Errorf("upstream headers = %v", e.Header)
	}
	frames := bed.dec.got()
	if last := frames[len(frames)-1]; strings.Contains(strings.ToLower(last), "named") || strings.Contains(last, "keep_alive") || !strings.Contains(last, `"x-keep":["yes"]`) {
		t.Errorf("req frame = %s", last)
	}
}

func TestProxyFilterEdits(t *testing.T) {
	_, up := upstream(t)
	bed := newFilterBed(t, helloLocal, nil, verdictFor(`"action":"allow","setHeaders":{"x-added":"1"},"removeHeaders":["x-gone"],"cred":"api","credential":"tok"`))
	bed.f.PlaintextHeaderSet = true
	bed.f.StripResponse = []string{"x_secret"}
	resp, body := roundTrip(t, bed.addr, "GET http://"+up+"/e HTTP/1.1\r\nHost: "+up+"\r\nCookie: c=1\r\nX_Api.Key: k\r\nAuthorization: Basic eDp5\r\nX.Gone: 1\r\nX_Added: 0\r\n\r\n")
	e := decode(t, body)
	if len(e.Header) != 3 || e.Header.Get("X-Added") != "1" || e.Header.Get("Authorization") != "Bearer tok" || e.Header.Get("Host") != up {
		t.Errorf("upstream headers = %v", e.Header)
	}
	if resp.Header.Get("X-Secret") != "" || resp.Header.Get("X-Kept") != "k" {
		t.Errorf("response headers = %v", resp.Header)
	}
	if got := credentialValue("github", "t", "github.com"); got != "Basic eC1hY2Nlc3MtdG9rZW46dA==" {
		t.Errorf("github placement = %q", got)
	}
}

// TestProxyFilterNeedBody: the decider asks for 5 bytes of an 11-byte
// body, sees them with cut, allows, and the upstream gets all 11.
func TestProxyFilterNeedBody(t *testing.T) {
	_, up := upstream(t)
	bed := newFilterBed(t, helloLocal, nil, func(d *testDecider, b []byte) []string {
		if q, err := decider.ParseReq(b); err == nil {
			return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"need_body","max":5}`, q.ID)}
		}
		body, err := decider.ParseBody(b)
		if err != nil {
			t.Errorf("body frame %s: %v", b, err)
			return nil
		}
		if string(body.Data) == "hello" && body.Cut {
			return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow"}`, body.ID)}
		}
		return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"deny","status":403,"reason":"body %q cut %v"}`, body.ID, body.Data, body.Cut)}
	})
	for _, te := range []string{"Content-Length: 11\r\n\r\nhello world", "Transfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n"} {
		resp, body := roundTrip(t, bed.addr, "POST http://"+up+"/b HTTP/1.1\r\nHost: "+up+"\r\n"+te)
		if resp.StatusCode != 200 {
			t.Fatalf("POST = %s %q", resp.Status, body)
		}
		if e := decode(t, body); e.Body != "hello world" {
			t.Errorf("upstream body = %q", e.Body)
		}
	}
	if got := bed.dec.got(); len(got) != 4 || got[1] != `{"t":"body","id":1,"data":"aGVsbG8=","cut":true}` {
		t.Errorf("frames = %q", got)
	}
}

// TestProxyFilterSlowDecider: no verdict within the timeout is a 503; the
// verdict that comes later is ignored and the next request is served.
func TestProxyFilterSlowDecider(t *testing.T) {
	_, up := upstream(t)
	late := make(chan uint64, 1)
	bed := newFilterBed(t, helloLocal, nil, func(d *testDecider, b []byte) []string {
		q, _ := decider.ParseReq(b)
		if q.Path == "/slow" {
			late <- q.ID
			return nil
		}
		return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow"}`, q.ID)}
	})
	bed.link.Timeout = 100 * time.Millisecond
	resp, body := roundTrip(t, bed.addr, "GET http://"+up+"/slow HTTP/1.1\r\nHost: "+up+"\r\n\r\n")
	if resp.StatusCode != 503 || resp.Header.Get("X-Deny-Reason") != "decider_unavailable" || body != "request decider: decider timed out\n" {
		t.Fatalf("slow verdict = %s %q %q", resp.Status, resp.Header.Get("X-Deny-Reason"), body)
	}
	bed.dec.send(fmt.Sprintf(`{"t":"verdict","id":%d,"action":"deny","status":403}`, <-late))
	if resp, body := roundTrip(t, bed.addr, "GET http://"+up+"/next HTTP/1.1\r\nHost: "+up+"\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatalf("after a late verdict = %s %q", resp.Status, body)
	}
}

// TestProxyFilterMalformedFrame: a frame that breaks the protocol ends
// the link; the pending request and every later one are answered 503.
func TestProxyFilterMalformedFrame(t *testing.T) {
	_, up := upstream(t)
	bed := newFilterBed(t, helloLocal, nil, func(d *testDecider, b []byte) []string {
		q, _ := decider.ParseReq(b)
		return []string{fmt.Sprintf(`{"t":"verdict","id":%d,"action":"allow","extra":true}`, q.ID)}
	})
	for range 2 {
		resp, body := roundTrip(t, bed.addr, "GET http://"+up+"/x HTTP/1.1\r\nHost: "+up+"\r\n\r\n")
		if resp.StatusCode != 503 || resp.Header.Get("X-Deny-Reason") != "decider_unavailable" {
			t.Fatalf("with a broken link = %s %q", resp.Status, body)
		}
	}
	select {
	case <-bed.link.Done():
	default:
		t.Fatal("the link is still up")
	}
	if err := bed.link.Err(); err == nil || !strings.Contains(err.Error(), `unknown field "extra"`) {
		t.Errorf("link error = %v", err)
	}
}

// TestProxyFilterTerminated: a CONNECT is terminated with the proxy's CA
// and the request inside is put to the decider, with its Host checked.
func TestProxyFilterTerminated(t *testing.T) {
	upSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s auth=%s", r.Method, r.RequestURI, r.Header.Get("Authorization"))
	}))
	defer upSrv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(upSrv.Certificate())
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	bed := newFilterBed(t, helloLocal, &Terminator{CA: ca, Roots: roots}, verdictFor(`"action":"allow","cred":"api","credential":"tok"`))
	trust := x509.NewCertPool()
	trust.AddCert(ca.Cert)
	client := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", Host: bed.addr}),
		TLSClientConfig: &tls.Config{RootCAs: trust},
	}}
	resp, err := client.Get(upSrv.URL + "/t?q=1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "GET /t?q=1 auth=Bearer tok" {
		t.Fatalf("through the tunnel = %s %q", resp.Status, b)
	}
	got := bed.dec.got()
	if len(got) != 1 || !strings.Contains(got[0], `"path":"/t","query":"q=1"`) {
		t.Fatalf("frames = %q", got)
	}
	req, _ := http.NewRequest("GET", upSrv.URL+"/m", nil)
	req.Host = "other.com"
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 421 || resp.Header.Get("X-Deny-Reason") != "misdirected" {
		t.Fatalf("Host other.com in a tunnel = %s", resp.Status)
	}
	resp.Body.Close()
}

// TestProxyFilterExpectContinue: a client that waits for 100 Continue
// gets it once the request is allowed (or its body asked for).
func TestProxyFilterExpectContinue(t *testing.T) {
	_, up := upstream(t)
	bed := newFilterBed(t, helloLocal, nil, verdictFor(`"action":"allow"`))
	c, err := net.Dial("tcp", bed.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "POST http://"+up+"/c HTTP/1.1\r\nHost: "+up+"\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("first line = %q", line)
	}
	br.ReadString('\n')
	io.WriteString(c, "hi")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if e := decode(t, string(b)); e.Body != "hi" {
		t.Errorf("upstream body = %q", e.Body)
	}
}

// TestProxyFilterTunnelRefusals: a TLS server name that is not the
// CONNECT host gets 421 for every request of the tunnel; a tunnel over
// the cap is refused with too_many_tunnels; a CONNECT to a host outside
// the lists with host_not_allowed.
func TestProxyFilterTunnelRefusals(t *testing.T) {
	upSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "reached") }))
	defer upSrv.Close()
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	bed := newFilterBed(t, helloLocal, &Terminator{CA: ca, MaxTunnels: func() int { return 1 }}, verdictFor(`"action":"allow"`))
	trust := x509.NewCertPool()
	trust.AddCert(ca.Cert)
	target := strings.TrimPrefix(upSrv.URL, "https://")
	c, err := net.Dial("tcp", bed.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	br := bufio.NewReader(c)
	if resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT = %v, %v", resp, err)
	}
	tc := tls.Client(&bufferedConn{Conn: c, r: br}, &tls.Config{ServerName: "other.example", RootCAs: trust})
	io.WriteString(tc, "GET / HTTP/1.1\r\nHost: other.example\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 421 || resp.Header.Get("X-Deny-Reason") != "misdirected" {
		t.Errorf("request with another server name = %s %q", resp.Status, resp.Header.Get("X-Deny-Reason"))
	}
	// The tunnel above is open: the cap of 1 is reached.
	resp2, body := roundTrip(t, bed.addr, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n\r\n")
	if resp2.StatusCode != 503 || resp2.Header.Get("X-Deny-Reason") != "too_many_tunnels" {
		t.Errorf("CONNECT over the cap = %s %q %q", resp2.Status, resp2.Header.Get("X-Deny-Reason"), body)
	}
	resp2, _ = roundTrip(t, bed.addr, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
	if resp2.StatusCode != 403 || resp2.Header.Get("X-Deny-Reason") != "host_not_allowed" {
		t.Errorf("CONNECT outside the lists = %s %q", resp2.Status, resp2.Header.Get("X-Deny-Reason"))
	}
	if got := bed.dec.got(); len(got) != 0 {
		t.Errorf("the decider was asked: %q", got)
	}
}
