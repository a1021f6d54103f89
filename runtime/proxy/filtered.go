package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"srt.dev/compiler/netpolicy"
	"srt.dev/runtime/proxy/decider"
)

// Timeouts of filtered mode on the client side.
const (
	filteredHeadTimeout = 60 * time.Second
	filteredIdle        = 10 * time.Second
)

// serveFiltered accepts connections for filtered mode. It reads requests
// itself rather than through net/http's server, which drops the Host
// header of an absolute-form request and resolves nothing the filter
// needs to compare.
func (p *HTTP) serveFiltered(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return err
		}
		go p.filteredConn(c, nil, nil)
	}
}

// A tunnelTarget is the destination of a terminated tunnel.
type tunnelTarget struct {
	host string // canonical
	port int
	sni  string
	// misdirected is set when the TLS server name named another host:
	// every request of the tunnel is refused.
	misdirected bool
	// first is the upstream connection made at CONNECT time, used by the
	// first TLS dial.
	first atomic.Pointer[net.Conn]
}

// fconn is one client connection of filtered mode (or one terminated
// tunnel, when tunnel is set).
type fconn struct {
	p      *HTTP
	c      net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	tunnel *tunnelTarget
	tr     *http.Transport
	// expect is set while the client waits for 100 Continue before it
	// sends the body.
	expect bool
}

// continueBody tells a client that waits for it to send the body, once.
func (fc *fconn) continueBody() {
	if fc.expect {
		fc.expect = false
		fc.bw.WriteString("HTTP/1.1 100 Continue\r\n\r\n")
		fc.bw.Flush()
	}
}

func (p *HTTP) filteredConn(c net.Conn, br *bufio.Reader, tunnel *tunnelTarget) {
	if br == nil {
		br = bufio.NewReaderSize(c, 16<<10)
	}
	fc := &fconn{p: p, c: c, br: br, bw: bufio.NewWriterSize(c, 16<<10), tunnel: tunnel}
	defer func() {
		if fc.tr != nil {
			fc.tr.CloseIdleConnections()
		}
		if tunnel != nil {
			if up := tunnel.first.Swap(nil); up != nil {
				(*up).Close()
			}
		}
		c.Close()
	}()
	for fc.serveOne() {
	}
}

// serveOne serves one request; false ends the connection.
func (fc *fconn) serveOne() bool {
	fc.c.SetReadDeadline(time.Now().Add(filteredIdle))
	if _, err := fc.br.Peek(1); err != nil {
		return false
	}
	fc.c.SetReadDeadline(time.Now().Add(filteredHeadTimeout))
	head, err := readHead(fc.br)
	fc.c.SetReadDeadline(time.Time{})
	switch {
	case errors.Is(err, errHeadTooLarge):
		refuse(http.StatusRequestHeaderFieldsTooLarge, denyBadRequest, "the request head is over 2 MiB\n").write(fc.bw, false, true)
		return false
	case err != nil:
		return false
	}
	raw, req, err := parseHead(head)
	if err != nil {
		badRequest("%v", err).write(fc.bw, false, true)
		return false
	}
	if raw.method == http.MethodConnect {
		if fc.tunnel != nil {
			badRequest("CONNECT inside a tunnel").write(fc.bw, false, true)
			return false
		}
		fc.p.filteredConnect(fc, req)
		return false
	}
	body := newRequestBody(fc.br, req)
	fc.expect = body != nil && strings.EqualFold(req.Header.Get("Expect"), "100-continue")
	req.Header.Del("Expect")
	ctx, cancel := context.WithCancel(fc.p.ctx())
	defer cancel()
	out, r := fc.decide(ctx, raw, req, body)
	keep := !req.Close
	if r != nil {
		// An unread body would be read as the next request.
		keep = keep && body == nil
		r.write(fc.bw, req.Method == http.MethodHead, !keep)
		return keep
	}
	fc.continueBody()
	resp, err := fc.transport().RoundTrip(out)
	if err != nil {
		var ge *guardError
		if errors.As(err, &ge) {
			refuse(http.StatusForbidden, denyAddressNotAllowed, "Connection to "+out.URL.Hostname()+" blocked: "+ge.reason+"\n").write(fc.bw, req.Method == http.MethodHead, true)
			return false
		}
		fc.p.debug("upstream failed", "host", out.URL.Host, "err", err)
		(&refusal{status: http.StatusBadGateway, body: "Bad Gateway\n"}).writeBare(fc.bw, req.Method == http.MethodHead)
		return false
	}
	keep = fc.writeResponse(resp, req) && keep
	resp.Body.Close()
	if body != nil {
		// The transport closes the body once it has sent it; what the
		// upstream did not read is skipped, or the connection ends.
		select {
		case <-body.closed:
		case <-time.After(10 * time.Second):
			return false
		}
		if n, _ := io.Copy(io.Discard, io.LimitReader(body.r, 1<<20)); n == 1<<20 {
			return false
		}
	}
	return keep
}

// writeBare writes a refusal that is not a policy's (502), without a
// deny code, and ends the connection.
func (r *refusal) writeBare(w *bufio.Writer, head bool) {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", r.status, http.StatusText(r.status), len(r.body))
	if !head {
		w.WriteString(r.body)
	}
	w.Flush()
}

// target is where a request goes.
type target struct {
	scheme, host string // host canonical
	port         int
	path, query  string
}

// target reads the destination from the request target and checks that
// the Host header names it (and, in a tunnel, the CONNECT host).
func (fc *fconn) target(raw *rawHead) (*target, *refusal) {
	spelled, _, _ := strings.Cut(raw.target, "#")
	t := &target{scheme: "http"}
	rest := spelled
	absolute := false
	if i := strings.Index(spelled, "://"); i > 0 && !strings.HasPrefix(spelled, "/") {
		t.scheme, rest, absolute = strings.ToLower(spelled[:i]), spelled[i+3:], true
		if t.scheme != "http" && t.scheme != "https" {
			return nil, badRequest("the scheme %q (http and https are proxied)", t.scheme)
		}
	}
	def := 80
	if fc.tunnel != nil || t.scheme == "https" {
		t.scheme, def = "https", 443
	}
	var auth string
	switch {
	case absolute:
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		auth, rest = rest[:end], rest[end:]
		if strings.Contains(auth, "@") {
			return nil, badRequest("user information in the request target")
		}
	case fc.tunnel == nil:
		return nil, badRequest("srt proxy takes absolute-form requests (GET http://host/path) and CONNECT")
	case rest == "*" && raw.method == http.MethodOptions:
	case !strings.HasPrefix(rest, "/"):
		return nil, badRequest("the request target %q", raw.target)
	}
	t.path, t.query, _ = strings.Cut(rest, "?")
	if t.path == "" {
		t.path = "/"
	}
	if strings.HasPrefix(t.path, "//") || !validTargetText(t.path) || !validTargetText(t.query) {
		return nil, badRequest("the request target %q", raw.target)
	}
	if len(t.path) > maxReqField {
		return nil, badRequest("the path is over %d bytes", maxReqField)
	}
	if len(raw.hosts) > 1 {
		return nil, badRequest("more than one Host header")
	}
	if fc.tunnel != nil {
		t.host, t.port = fc.tunnel.host, fc.tunnel.port
		if absolute {
			if same, r := sameAuthority(auth, t.host, t.port, def); r != nil || !same {
				return nil, orMisdirected(r)
			}
		}
	} else {
		host, port, r := splitAuthority(auth, def)
		if r != nil {
			return nil, r
		}
		d := netpolicy.Decide(context.Background(), fc.p.rules(), host, port, "")
		if d.Host == "" {
			return nil, badRequest("the host %q is malformed", host)
		}
		t.host, t.port = d.Host, port
	}
	if len(raw.hosts) == 1 {
		if len(raw.hosts[0]) > maxReqField {
			return nil, badRequest("the Host header is over %d bytes", maxReqField)
		}
		if same, r := sameAuthority(raw.hosts[0], t.host, t.port, def); r != nil || !same {
			return nil, orMisdirected(r)
		}
	} else if !absolute {
		return nil, badRequest("no Host header")
	}
	return t, nil
}

func orMisdirected(r *refusal) *refusal {
	if r != nil {
		return r
	}
	return refusedMisdirected
}

// validTargetText reports whether a path or query is printable ASCII, or
// UTF-8 the decider can be shown as is.
func validTargetText(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '\uFFFD' {
			return false
		}
	}
	return true
}

// splitAuthority splits host[:port] of an absolute request target.
func splitAuthority(auth string, def int) (string, int, *refusal) {
	if auth == "" {
		return "", 0, badRequest("no host in the request target")
	}
	if strings.HasSuffix(auth, "]") || !strings.Contains(auth, ":") {
		return strings.TrimSuffix(strings.TrimPrefix(auth, "["), "]"), def, nil
	}
	host, port, ok := splitHostPort(auth)
	if !ok {
		return "", 0, badRequest("the authority %q", auth)
	}
	return host, port, nil
}

func (p *HTTP) rules() *netpolicy.Rules {
	if p.Rules == nil {
		return nil
	}
	return p.Rules()
}

// decide runs the fixed policy and the decider for one request, and
// returns the request to send upstream, or the refusal.
func (fc *fconn) decide(ctx context.Context, raw *rawHead, req *http.Request, body *requestBody) (*http.Request, *refusal) {
	if req.Method == "TRACE" || req.Method == "TRACK" {
		return nil, refuse(http.StatusMethodNotAllowed, denyMethodRefused, "the "+req.Method+" method is not forwarded\n")
	}
	if fc.tunnel != nil && fc.tunnel.misdirected {
		return nil, refuse(http.StatusMisdirectedRequest, denyMisdirected, "the TLS server name does not match the CONNECT target\n")
	}
	t, r := fc.target(raw)
	if r != nil {
		return nil, r
	}
	d := netpolicy.Decide(ctx, fc.p.rules(), t.host, t.port, "")
	if !d.Allow {
		return nil, refusedHost
	}
	if body != nil && (req.Method == http.MethodGet || req.Method == http.MethodHead) {
		return nil, refusedBodyless
	}
	removeHopHeadersFolded(req.Header, nil)
	headers, r := reqHeaders(req.Header)
	if r != nil {
		return nil, r
	}
	q := decider.Req{Method: req.Method, Host: t.host, Port: t.port, Path: t.path, Query: t.query, Headers: headers}
	if len(raw.hosts) == 1 {
		q.HostHeader = raw.hosts[0]
	}
	if fc.tunnel != nil {
		q.SNI = fc.tunnel.sni
	}
	f := fc.p.Filter
	v, err := f.Decider.Ask(ctx, q)
	var held []byte
	var cut bool
	if err == nil && v.Action == decider.ActionNeedBody {
		fc.continueBody()
		if held, cut, r = f.hold(body, v.Max); r != nil {
			return nil, r
		}
		defer f.held.Add(-int64(len(held)))
		v, err = f.Decider.Body(ctx, v.ID, held, cut)
	}
	switch {
	case errors.Is(err, decider.ErrReqTooLarge):
		return nil, badRequest("the request does not fit in a frame for the decider")
	case err != nil:
		return nil, refuse(http.StatusServiceUnavailable, denyDeciderUnavailable, "request decider: "+err.Error()+"\n")
	case v.Action == decider.ActionDeny:
		text := v.Reason
		if text == "" {
			text = "denied by the request decider"
		}
		return nil, refuse(v.Status, denyDecider, text+"\n")
	}
	if t.scheme == "http" && !f.PlaintextHeaderSet && (len(v.SetHeaders) > 0 || v.Cred != "") {
		return nil, refusedPlaintext
	}
	out := &http.Request{
		Method:     req.Method,
		URL:        &url.URL{Scheme: t.scheme, Host: authority(t.host, t.port, t.scheme), Opaque: t.path, RawQuery: t.query},
		Host:       authority(t.host, t.port, t.scheme),
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     req.Header,
		Body:       http.NoBody,
	}
	out = out.WithContext(ctx)
	applyVerdict(out.Header, v, t.host)
	if _, ok := out.Header["User-Agent"]; !ok {
		out.Header["User-Agent"] = nil // no User-Agent of the proxy's own
	}
	if body != nil {
		out.Body, out.ContentLength = body, req.ContentLength
		if len(req.TransferEncoding) > 0 {
			out.ContentLength = -1
		}
		if held != nil {
			out.Body = &heldBody{r: io.MultiReader(bytes.NewReader(held), body), b: body}
		}
	}
	return out, nil
}

// heldBody is a body whose start was read for the decider.
type heldBody struct {
	r io.Reader
	b *requestBody
}

func (h *heldBody) Read(p []byte) (int, error) { return h.r.Read(p) }
func (h *heldBody) Close() error               { return h.b.Close() }

// hold reads up to max bytes of the body for the decider, within the
// budget of all bodies held at once.
func (f *Filter) hold(body *requestBody, max int) ([]byte, bool, *refusal) {
	if body == nil {
		return []byte{}, false, nil
	}
	if f.held.Add(int64(max)) > maxHeldBodies {
		f.held.Add(-int64(max))
		return nil, false, refuse(http.StatusServiceUnavailable, denyDeciderUnavailable, "request decider: too many request bodies held for the decider at once\n")
	}
	defer f.held.Add(-int64(max))
	buf := make([]byte, max+1)
	n, err := io.ReadFull(body.r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, false, badRequest("reading the body: %v", err)
	}
	f.held.Add(int64(min(n, max)))
	if n > max {
		// The byte past max is sent upstream after the held ones.
		body.r = io.MultiReader(bytes.NewReader(buf[max:n]), body.r)
		return buf[:max], true, nil
	}
	return buf[:n], false, nil
}

// transport is the connection's client to the upstreams: it dials
// through the policy and the resolved-address guard.
func (fc *fconn) transport() *http.Transport {
	if fc.tr != nil {
		return fc.tr
	}
	p := fc.p
	var roots = p.rootCAs()
	fc.tr = &http.Transport{
		Proxy:               nil,
		DisableCompression:  true,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
		TLSNextProto:        map[string]func(string, *tls.Conn) http.RoundTripper{},
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return p.dialVetted(ctx, addr)
		},
		DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			var c net.Conn
			if fc.tunnel != nil {
				if up := fc.tunnel.first.Swap(nil); up != nil {
					c = *up
				}
			}
			if c == nil {
				var err error
				if c, err = p.dialVetted(ctx, addr); err != nil {
					return nil, err
				}
			}
			host, _, _ := net.SplitHostPort(addr)
			tc := tls.Client(c, &tls.Config{ServerName: host, RootCAs: roots, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12})
			if err := tc.HandshakeContext(ctx); err != nil {
				c.Close()
				return nil, err
			}
			return tc, nil
		},
	}
	return fc.tr
}

func (p *HTTP) rootCAs() *x509.CertPool {
	if p.TLS != nil {
		return p.TLS.Roots
	}
	return nil
}

// dialVetted connects to addr (canonical host:port) through the policy
// and the resolved-address guard.
func (p *HTTP) dialVetted(ctx context.Context, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, _ := strconv.Atoi(portText)
	c, d, err := p.Egress.connect(ctx, "http", host, port, "")
	if err == nil && !d.Allow {
		err = errors.New(d.Reason)
	}
	return c, err
}

// writeResponse sends the upstream's response to the client and reports
// whether the connection may carry another request.
func (fc *fconn) writeResponse(resp *http.Response, req *http.Request) bool {
	f := fc.p.Filter
	strip := map[string]bool{}
	for _, n := range f.StripResponse {
		strip[foldName(n)] = true
	}
	removeHopHeadersFolded(resp.Header, strip)
	resp.Proto, resp.ProtoMajor, resp.ProtoMinor = "HTTP/1.1", 1, 1
	keep := !req.Close
	bodyless := req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified || resp.StatusCode < 200
	resp.TransferEncoding = nil
	if resp.ContentLength < 0 && !bodyless {
		if req.ProtoAtLeast(1, 1) {
			resp.TransferEncoding = []string{"chunked"}
		} else {
			keep = false
		}
	}
	resp.Close = !keep
	if fc.tunnel != nil {
		resp.Header.Set("Keep-Alive", "timeout=5")
	}
	if err := resp.Write(fc.bw); err != nil {
		return false
	}
	return fc.bw.Flush() == nil && keep
}
