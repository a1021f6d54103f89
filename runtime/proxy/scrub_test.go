package proxy

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// tenants is an upstream that serves many virtual hosts on one address,
// as a CDN or a hosting platform does: it answers for the tenant the Host
// header names, echoing what the request carried. With Accept-Encoding
// gzip the echo is gzipped; under /force/CODINGS it is encoded with
// CODINGS (comma-separated, in the order applied) whatever the request
// asked for, and /force/br labels a plain body br, as a server would
// whose coding no standard library reads.
type tenants struct {
	mu   sync.Mutex
	seen []string // "host auth=… ae=…" of each request
}

func (u *tenants) requests() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.seen...)
}

func (u *tenants) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	u.mu.Lock()
	u.seen = append(u.seen, fmt.Sprintf("%s auth=%s ae=%s", r.Host, auth, r.Header.Get("Accept-Encoding")))
	u.mu.Unlock()
	text := "tenant=" + r.Host + " auth=" + auth + "\n"
	w.Header().Set("X-Echo", auth)
	codings := ""
	if c, ok := strings.CutPrefix(r.URL.Path, "/force/"); ok {
		codings = c
	} else if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		codings = "gzip"
	}
	if codings == "" {
		io.WriteString(w, text)
		return
	}
	w.Header().Set("Content-Encoding", strings.ReplaceAll(strings.ReplaceAll(codings, "raw-deflate", "deflate"), ",", ", "))
	io.WriteString(w, encode(text, codings))
}

// encode applies codings (comma-separated, first applied first) to s.
func encode(s, codings string) string {
	for _, c := range strings.Split(codings, ",") {
		var b strings.Builder
		var w io.WriteCloser
		switch c {
		case "gzip", "x-gzip":
			w = gzip.NewWriter(&b)
		case "deflate":
			w = zlib.NewWriter(&b)
		case "raw-deflate":
			w, _ = flate.NewWriter(&b, flate.DefaultCompression)
		default: // br: not encoded at all, only labelled
			continue
		}
		io.WriteString(w, s)
		w.Close()
		s = b.String()
	}
	return s
}

// uncompress undoes the Content-Encoding of a response, as curl --compressed
// does; a coding it does not know is left as it is.
func uncompress(t *testing.T, h http.Header, body string) string {
	t.Helper()
	codings := contentCodings(h)
	for i := len(codings) - 1; i >= 0; i-- {
		if codings[i] == "br" || codings[i] == "zstd" {
			continue
		}
		r, err := decoder(codings[i], strings.NewReader(body))
		if err != nil {
			t.Fatalf("decoding %s: %v", codings[i], err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("decoding %s: %v", codings[i], err)
		}
		body = string(b)
	}
	return body
}

// rawClient trusts the run's CA, asks for every coding curl --compressed
// asks for, and decodes nothing itself.
func (tb *tlsbed) rawClient(socks bool) *http.Client {
	c := tb.client(tb.runCA, socks)
	c.Transport.(*http.Transport).DisableCompression = true
	return c
}

// TestTerminateMisdirected: inside a tunnel to a host, a request that
// names another host (Host header, absolute-form target, another port)
// is answered 421 and reaches nothing; the upstream's tenants would
// otherwise route it to another tenant, with the real credential of the
// tunnel's host.
func TestTerminateMisdirected(t *testing.T) {
	up := &tenants{}
	tb := newTLSBed(t, up)
	tests := []struct {
		name   string
		url    string // the tunnel is to its host
		host   string // the Host header; "" for the URL's
		raw    string // a raw request instead, sent inside the tunnel
		socks  bool
		status int
		seen   string // what the upstream saw, "" for nothing
		event  string // the violation line, "" for none
	}{
		{name: "control: the tunnel's host", url: "https://inject.test/", status: 200,
			seen: "inject.test auth=Bearer " + testReal + " ae=identity"},
		{name: "control: another spelling of the tunnel's host", url: "https://inject.test/", host: "INJECT.Test.:443", status: 200,
			seen: "inject.test auth=Bearer " + testReal + " ae=identity"},
		{name: "control: the other tenant in its own tunnel", url: "https://other.test/", status: 200,
			seen: "other.test auth=Bearer " + testSentinel + " ae=gzip, deflate, br, zstd"},
		{name: "Host header names another tenant", url: "https://inject.test/", host: "other.test", status: 421,
			event: "deny network-outbound other.test:443 (the request names another host than its TLS tunnel to inject.test)"},
		{name: "through SOCKS", url: "https://inject.test/", host: "other.test", socks: true, status: 421,
			event: "deny network-outbound other.test:443 (the request names another host than its TLS tunnel to inject.test)"},
		{name: "Host header names another port", url: "https://inject.test/", host: "inject.test:8443", status: 421,
			event: "deny network-outbound inject.test:8443 (the request names another host than its TLS tunnel to inject.test)"},
		{name: "Host header names the inject host in another host's tunnel", url: "https://other.test/", host: "inject.test", status: 421,
			event: "deny network-outbound inject.test:443 (the request names another host than its TLS tunnel to other.test)"},
		{name: "absolute-form target names another tenant", url: "https://inject.test/", status: 421,
			raw:   "GET https://other.test/ HTTP/1.1\r\nHost: inject.test\r\nAuthorization: Bearer " + testSentinel + "\r\n\r\n",
			event: "deny network-outbound other.test:443 (the request names another host than its TLS tunnel to inject.test)"},
		{name: "malformed Host header", url: "https://inject.test/", host: "inject.test:99999", status: 421,
			event: "deny network-outbound inject.test:443 (the request inside the TLS tunnel names a malformed host)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, refusedBefore := len(up.requests()), len(tb.refusals())
			var resp *http.Response
			var body string
			if tt.raw != "" {
				resp, body = rawInTunnel(t, tb, tt.url, tt.raw)
			} else {
				req, _ := http.NewRequest("GET", tt.url, nil)
				req.Header.Set("Authorization", "Bearer "+testSentinel)
				req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
				if tt.host != "" {
					req.Host = tt.host
				}
				resp, body = do(t, tb.rawClient(tt.socks), req)
				body = uncompress(t, resp.Header, body)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d; body %q", resp.StatusCode, tt.status, body)
			}
			if strings.Contains(body, testReal) || strings.Contains(resp.Header.Get("X-Echo"), testReal) {
				t.Errorf("the real value reached the client: %q", body)
			}
			seen := up.requests()[before:]
			switch {
			case tt.seen == "" && len(seen) != 0:
				t.Errorf("the upstream received %q, want nothing", seen)
			case tt.seen != "" && (len(seen) != 1 || seen[0] != tt.seen):
				t.Errorf("the upstream received %q, want %q", seen, tt.seen)
			}
			refused := tb.refusals()[refusedBefore:]
			if tt.event == "" {
				if len(refused) != 0 {
					t.Errorf("refusals %v, want none", refused)
				}
				return
			}
			if resp.Header.Get("X-Proxy-Error") != "misdirected-request" || !strings.Contains(body, "srt did not forward this request") {
				t.Errorf("421 with X-Proxy-Error %q and body %q", resp.Header.Get("X-Proxy-Error"), body)
			}
			if len(refused) != 1 || refused[0].Line() != tt.event || refused[0].Stage != "host" {
				t.Errorf("refusals %v, want one: %q", refused, tt.event)
			}
		})
	}
}

// rawInTunnel opens a terminated tunnel to rawURL's host through the
// HTTP proxy and sends raw in it.
func rawInTunnel(t *testing.T, tb *tlsbed, rawURL, raw string) (*http.Response, string) {
	t.Helper()
	u, _ := url.Parse(rawURL)
	c, _, err := connectThrough(tb.proxyAddr, u.Hostname()+":443")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roots := x509.NewCertPool()
	roots.AddCert(tb.runCA.Cert)
	tc := tls.Client(c, &tls.Config{ServerName: u.Hostname(), RootCAs: roots})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(tc, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestTerminateEchoCompressed: an inject host that echoes the request
// compressed never hands the real value back. The request asks for
// identity; a body encoded anyway is decoded and scrubbed (gzip,
// deflate) or refused (anything else). The control rows show the echo
// primitive: to a host outside the inject hosts, the compressed echo
// reaches the client as the upstream sent it.
func TestTerminateEchoCompressed(t *testing.T) {
	up := &tenants{}
	tb := newTLSBed(t, up)
	echoed := "tenant=inject.test auth=Bearer " + testSentinel + "\n"
	tests := []struct {
		name, url string
		status    int
		encoding  string // the Content-Encoding the client gets
		body      string // decoded as curl --compressed would
		ae        string // the Accept-Encoding the upstream got
	}{
		{"control: gzip echo from another host", "https://other.test/echo", 200, "gzip",
			"tenant=other.test auth=Bearer " + testSentinel + "\n", "gzip, deflate, br, zstd"},
		{"control: forced gzip from another host", "https://other.test/force/gzip", 200, "gzip",
			"tenant=other.test auth=Bearer " + testSentinel + "\n", "gzip, deflate, br, zstd"},
		{"asks for identity", "https://inject.test/echo", 200, "", echoed, "identity"},
		{"gzip anyway", "https://inject.test/force/gzip", 200, "", echoed, "identity"},
		{"x-gzip anyway", "https://inject.test/force/x-gzip", 200, "", echoed, "identity"},
		{"deflate (zlib) anyway", "https://inject.test/force/deflate", 200, "", echoed, "identity"},
		{"raw deflate anyway", "https://inject.test/force/raw-deflate", 200, "", echoed, "identity"},
		{"deflate then gzip", "https://inject.test/force/deflate,gzip", 200, "", echoed, "identity"},
		{"br is refused", "https://inject.test/force/br", 502, "", "", "identity"},
		{"br after gzip is refused", "https://inject.test/force/gzip,br", 502, "", "", "identity"},
	}
	for _, socks := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s socks=%v", tt.name, socks), func(t *testing.T) {
				before := len(up.requests())
				req, _ := http.NewRequest("GET", tt.url, nil)
				req.Header.Set("Authorization", "Bearer "+testSentinel)
				req.Header.Set("Accept-Encoding", "gzip, deflate, br, zstd")
				resp, raw := do(t, tb.rawClient(socks), req)
				body := uncompress(t, resp.Header, raw)
				if strings.Contains(raw, testReal) || strings.Contains(body, testReal) || strings.Contains(resp.Header.Get("X-Echo"), testReal) {
					t.Fatalf("the real value reached the client: %q", body)
				}
				if resp.StatusCode != tt.status || resp.Header.Get("Content-Encoding") != tt.encoding {
					t.Fatalf("status %d, Content-Encoding %q; want %d, %q; body %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), tt.status, tt.encoding, body)
				}
				seen := up.requests()[before:]
				if len(seen) != 1 || !strings.HasSuffix(seen[0], " ae="+tt.ae) {
					t.Errorf("the upstream received %q, want Accept-Encoding %q", seen, tt.ae)
				}
				if strings.HasPrefix(tt.url, "https://inject.test/") && !strings.Contains(seen[0], "auth=Bearer "+testReal) {
					t.Errorf("the upstream received %q, want the real value (else nothing was tested)", seen)
				}
				if tt.status == 502 {
					if resp.Header.Get("X-Proxy-Error") != "unreadable-content-encoding" || !strings.Contains(body, `encoded with "br"`) {
						t.Errorf("refusal: X-Proxy-Error %q, body %q", resp.Header.Get("X-Proxy-Error"), body)
					}
					return
				}
				if body != tt.body {
					t.Errorf("body %q, want %q", body, tt.body)
				}
			})
		}
	}
}

// TestTerminateEchoStreams: a streamed response (server-sent events)
// reaches the client event by event, a real value cut between two writes
// included, compressed or not.
func TestTerminateEchoStreams(t *testing.T) {
	for _, coding := range []string{"", "gzip"} {
		t.Run("coding="+coding, func(t *testing.T) {
			read := make(chan struct{})
			tb := newTLSBed(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var out io.Writer = w
				flush := func() { w.(http.Flusher).Flush() }
				if coding != "" {
					w.Header().Set("Content-Encoding", coding)
					gz := gzip.NewWriter(w)
					defer gz.Close()
					out = gz
					flush = func() { gz.Flush(); w.(http.Flusher).Flush() }
				}
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(out, "data: hello\n\n")
				flush()
				select {
				case <-read:
				case <-time.After(5 * time.Second):
					return
				}
				io.WriteString(out, "data: "+testReal[:10])
				flush()
				time.Sleep(50 * time.Millisecond)
				io.WriteString(out, testReal[10:]+"\n\n")
			}))
			resp, err := tb.rawClient(false).Get("https://inject.test/events")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			first := make([]byte, len("data: hello\n\n"))
			done := make(chan error, 1)
			go func() { _, err := io.ReadFull(br, first); done <- err }()
			select {
			case err := <-done:
				if err != nil || string(first) != "data: hello\n\n" {
					t.Fatalf("first event %q, %v", first, err)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the first event did not arrive before the next one was sent")
			}
			close(read)
			rest, err := io.ReadAll(br)
			if err != nil || string(rest) != "data: "+testSentinel+"\n\n" {
				t.Errorf("rest %q, %v; want the stand-in", rest, err)
			}
		})
	}
}

// TestPlainInjectEchoCompressed: with allowPlaintextInject, the plain
// HTTP path follows the same rules: the request goes to the host the
// policy decided on, whatever Host header the client sent, asks for
// identity, and its response is decoded or refused.
func TestPlainInjectEchoCompressed(t *testing.T) {
	up := &tenants{}
	srv := httptest.NewServer(up)
	defer srv.Close()
	upAddr := strings.TrimPrefix(srv.URL, "http://")
	e := tlsEgress(&upAddr, nil)
	e.Inject = &Injector{Plaintext: true, Secrets: []Secret{{
		Name: "TOKEN", Sentinel: testSentinel, Real: testReal,
		Inject: func(h string) bool { return h == "inject.test" },
	}}}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Close()
	go (&HTTP{Egress: e}).Serve(context.Background(), pl)
	c := &http.Client{Transport: &http.Transport{DisableCompression: true,
		Proxy: http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("srt", "tok"), Host: pl.Addr().String()})}}
	for _, tt := range []struct {
		path, host string
		status     int
		seen       string
	}{
		{"/echo", "", 200, "inject.test auth=Bearer " + testReal + " ae=identity"},
		{"/echo", "other.test", 200, "inject.test auth=Bearer " + testReal + " ae=identity"},
		{"/force/gzip", "", 200, "inject.test auth=Bearer " + testReal + " ae=identity"},
		{"/force/br", "", 502, "inject.test auth=Bearer " + testReal + " ae=identity"},
	} {
		before := len(up.requests())
		var resp *http.Response
		var raw string
		if tt.host == "" {
			req, _ := http.NewRequest("GET", "http://inject.test"+tt.path, nil)
			req.Header.Set("Authorization", "Bearer "+testSentinel)
			req.Header.Set("Accept-Encoding", "gzip, br")
			resp, raw = do(t, c, req)
		} else {
			// net/http's client would put the Host header in the target.
			resp, raw = rawToProxy(t, pl.Addr().String(), "GET http://inject.test"+tt.path+" HTTP/1.1\r\nHost: "+tt.host+
				"\r\nProxy-Authorization: Basic c3J0OnRvaw==\r\nAuthorization: Bearer "+testSentinel+"\r\nAccept-Encoding: gzip, br\r\n\r\n")
		}
		body := uncompress(t, resp.Header, raw)
		if strings.Contains(raw, testReal) || strings.Contains(body, testReal) {
			t.Errorf("%s: the real value reached the client: %q", tt.path, body)
		}
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.path, resp.StatusCode, tt.status)
		}
		if seen := up.requests()[before:]; len(seen) != 1 || seen[0] != tt.seen {
			t.Errorf("%s Host %q: the upstream received %q, want %q", tt.path, tt.host, seen, tt.seen)
		}
	}
}

// rawToProxy sends raw to the proxy at addr and reads the response.
func rawToProxy(t *testing.T, addr, raw string) (*http.Response, string) {
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
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}
