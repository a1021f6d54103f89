package proxy

import (
	"bufio"
	"bytes"
	"context"
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

	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/runtime/proxy/decider"
)

// Timeouts of filtered mode on the client side.
const (
	filteredHeadTimeout = 60 * time.Second
	filteredIdle        = 10 * time.Second
)

// Filtered mode reads requests itself rather than through net/http's
// server, which drops the Host header of an absolute-form request and
// resolves nothing the filter needs to compare; the responses go through
// the forwarder (forward.go) like every other mode's.

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
	p *HTTP
	// ctx ends with the connection, or when Serve shuts down;
	// upstream connections close with it.
	ctx context.Context
	// set holds raw, the accepted connection c is (or is carried by),
	// marked busy while a request is served.
	set    *connSet
	raw    net.Conn
	c      net.Conn
	br     *bufio.Reader
	bw     *bufio.Writer
	tunnel *tunnelTarget
	slot   upSlot
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

func (p *HTTP) filteredConn(ctx context.Context, set *connSet, raw, c net.Conn, br *bufio.Reader, tunnel *tunnelTarget) {
	if br == nil {
		br = bufio.NewReaderSize(c, 16<<10)
	}
	fc := &fconn{p: p, ctx: ctx, set: set, raw: raw, c: c, br: br, bw: bufio.NewWriterSize(c, 16<<10), tunnel: tunnel}
	defer func() {
		fc.slot.close()
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
	fc.set.busy(fc.raw, false)
	fc.c.SetReadDeadline(time.Now().Add(filteredIdle))
	if _, err := fc.br.Peek(1); err != nil {
		return false
	}
	fc.set.busy(fc.raw, true)
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
	ctx, cancel := context.WithCancel(fc.ctx)
	defer cancel()
	out, r := fc.decide(ctx, raw, req, body)
	keep := !req.Close
	isHead := req.Method == http.MethodHead
	if r != nil {
		// An unread body would be read as the next request.
		keep = keep && body == nil
		r.write(fc.bw, isHead, !keep)
		return keep
	}
	fc.continueBody()
	strip := map[string]bool{}
	for _, n := range fc.p.Filter.StripResponse {
		strip[foldName(n)] = true
	}
	rl := &relay{e: fc.p.Egress, host: out.URL.Hostname(), strip: strip}
	if fc.tunnel != nil {
		rl.keepAlive = "timeout=5"
	}
	rw := &rawResponse{c: fc.c, bw: fc.bw, req: req, h: http.Header{}}
	for attempt := 0; ; attempt++ {
		uc, err := fc.upstream(ctx, out)
		if err != nil {
			var ge *guardError
			if errors.As(err, &ge) {
				refuse(http.StatusForbidden, denyAddressNotAllowed, "Connection to "+out.URL.Hostname()+" blocked: "+ge.reason+"\n").write(fc.bw, isHead, true)
				return false
			}
			fc.p.debug("upstream failed", "host", out.URL.Host, "err", err)
			(&refusal{status: http.StatusBadGateway, body: "Bad Gateway\n"}).writeBare(fc.bw, isHead)
			return false
		}
		reusable, written, err := rl.exchange(rw, out, uc)
		if err == nil {
			if reusable {
				fc.slot.put(uc)
			} else {
				uc.close()
			}
			break
		}
		uc.close()
		if written {
			return false // cut short: the client sees the connection end
		}
		if attempt > 0 || !retryable(out, uc) {
			fc.p.debug("upstream failed", "host", out.URL.Host, "err", err)
			(&refusal{status: http.StatusBadGateway, body: "Bad Gateway\n"}).writeBare(fc.bw, isHead)
			return false
		}
	}
	keep = rw.finish() == nil && rw.keep && keep
	if body != nil {
		// The request's writer closes the body once it has sent it; what
		// the upstream did not read is skipped, or the connection ends.
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
		d := netpolicy.Decide(fc.ctx, fc.p.rules(), host, port, "")
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
	stripHop(req.Header, nil)
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

// upstream returns a connection for out: the one kept from the last
// request when it goes to the same place, else a new one through the
// policy and the resolved-address guard (in a tunnel, first the one made
// at CONNECT time).
func (fc *fconn) upstream(ctx context.Context, out *http.Request) (*upConn, error) {
	key := out.URL.Scheme + "://" + out.URL.Host
	if uc := fc.slot.take(key); uc != nil {
		return uc, nil
	}
	host, port := out.URL.Hostname(), out.URL.Port()
	if port == "" {
		port = "80"
		if out.URL.Scheme == "https" {
			port = "443"
		}
	}
	var c net.Conn
	if fc.tunnel != nil {
		if up := fc.tunnel.first.Swap(nil); up != nil {
			c = *up
		}
	}
	if c == nil {
		var err error
		if c, err = fc.p.dialVetted(ctx, net.JoinHostPort(host, port)); err != nil {
			return nil, err
		}
	}
	if out.URL.Scheme == "https" {
		tc, err := fc.p.tlsClient(ctx, c, host)
		if err != nil {
			return nil, err
		}
		c = tc
	}
	return newUpConn(fc.ctx, c, nil, key), nil
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

// rawResponse is the http.ResponseWriter of filtered mode: it frames a
// response on a connection that net/http's server does not own.
// Informational responses go out as they come; a final one with a
// length goes as it is, one without is chunked for an HTTP/1.1 client and delimited by the
// connection's end for an older one.
type rawResponse struct {
	c   net.Conn
	bw  *bufio.Writer
	req *http.Request // the client's request
	h   http.Header

	wrote    bool
	keep     bool // the connection may carry another request
	noBody   bool
	chunked  bool
	trailers []string // announced in the head
	err      error
}

func (w *rawResponse) Header() http.Header { return w.h }

func (w *rawResponse) WriteHeader(code int) {
	if w.wrote || w.err != nil {
		return
	}
	if code >= 100 && code < 200 {
		fmt.Fprintf(w.bw, "HTTP/1.1 %d %s\r\n", code, http.StatusText(code))
		w.h.Write(w.bw)
		w.bw.WriteString("\r\n")
		w.err = w.bw.Flush()
		return
	}
	w.wrote = true
	w.keep = !w.req.Close
	w.noBody = w.req.Method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified
	w.h.Del("Transfer-Encoding")
	switch {
	case w.noBody || w.h.Get("Content-Length") != "":
	case w.req.ProtoAtLeast(1, 1):
		w.chunked = true
		w.h.Set("Transfer-Encoding", "chunked")
		for _, v := range w.h.Values("Trailer") {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					w.trailers = append(w.trailers, http.CanonicalHeaderKey(n))
				}
			}
		}
	default:
		w.keep = false
	}
	if !w.chunked {
		w.h.Del("Trailer")
	}
	if !w.keep {
		w.h.Set("Connection", "close")
	}
	fmt.Fprintf(w.bw, "HTTP/1.1 %d %s\r\n", code, http.StatusText(code))
	w.h.Write(w.bw)
	_, w.err = w.bw.WriteString("\r\n")
}

func (w *rawResponse) Write(p []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.noBody || len(p) == 0 {
		return len(p), nil
	}
	if w.chunked {
		fmt.Fprintf(w.bw, "%x\r\n", len(p))
	}
	n, err := w.bw.Write(p)
	if err == nil && w.chunked {
		_, err = w.bw.WriteString("\r\n")
	}
	w.err = err
	return n, err
}

func (w *rawResponse) FlushError() error {
	if w.err == nil {
		w.err = w.bw.Flush()
	}
	return w.err
}

// finish ends the response (the last chunk, and the trailers) and
// flushes it.
func (w *rawResponse) finish() error {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return w.err
	}
	if w.chunked {
		w.bw.WriteString("0\r\n")
		t := http.Header{}
		for _, n := range w.trailers {
			if vs := w.h[n]; len(vs) > 0 {
				t[n] = vs
			}
		}
		for k, vs := range w.h {
			if n, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
				t[http.CanonicalHeaderKey(n)] = vs
			}
		}
		t.Write(w.bw)
		w.bw.WriteString("\r\n")
	}
	w.err = w.bw.Flush()
	return w.err
}
