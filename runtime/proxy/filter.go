package proxy

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"golang.org/x/net/http/httpguts"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy/decider"
)

// A Filter puts the HTTP proxy in the filtered mode of srt proxy: every
// request, plain or inside a terminated tunnel, is put to an external
// decider, under a fixed policy:
//
//   - a CONNECT is served only by terminating its TLS (Egress.TLS must be
//     set, else every CONNECT is refused as an opaque tunnel);
//   - the Host header, the TLS server name and an absolute request target
//     must name the host the request goes to (else 421);
//   - hosts are plain ASCII; the request target is forwarded as spelled;
//   - hop-by-hop headers go in any spelling of - _ and .;
//   - the request head may be up to 2 MiB; TRACE and TRACK are refused.
//
// The allow and deny lists of Egress.Rules are checked before the
// decider is asked; the resolved-address guard after it allows (see
// FilterDeniedRanges). Every refusal carries X-Deny-Reason.
type Filter struct {
	// Decider is the link to the decider; required.
	Decider *decider.Link
	// StripResponse names response headers removed before the client
	// sees them, matched in any spelling of - _ and . and any case.
	StripResponse []string
	// PlaintextHeaderSet lets a verdict add headers (or a credential) to
	// a plain HTTP request; by default that request is refused, because
	// the value would cross the network unencrypted.
	PlaintextHeaderSet bool

	held atomic.Int64 // body bytes held for the decider, all requests
}

// FilterDeniedRanges are the private ranges the resolved-address guard
// refuses in filtered mode, in addition to its fixed classes.
var FilterDeniedRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("fc00::/7"),
}

// Limits of filtered mode.
const (
	maxFilteredHead  = 2 << 20  // request head
	maxHeldBodies    = 64 << 20 // bodies held for the decider, all requests
	maxReqHeaderVals = 190      // header values in one req frame
	maxReqHeaderSize = 64 << 10 // names and values in one req frame
	maxReqField      = 8 << 10  // host, Host header, server name, path
)

// Deny codes: the X-Deny-Reason of each refusal.
const (
	denyHostNotAllowed     = "host_not_allowed"
	denyDecider            = "decider"
	denyDeciderUnavailable = "decider_unavailable"
	denyBadRequest         = "bad_request"
	denyMisdirected        = "misdirected"
	denyOpaqueTunnel       = "opaque_tunnel"
	denyPlaintextHeaderSet = "plaintext_header_set"
	denyBodylessWithBody   = "bodyless_method_body"
	denyAddressNotAllowed  = "address_not_allowed"
	denyTooManyTunnels     = "too_many_tunnels"
	denyMethodRefused      = "method_refused"
)

// A refusal is an answer the proxy gives instead of forwarding.
type refusal struct {
	status int
	code   string
	body   string
}

func refuse(status int, code, body string) *refusal { return &refusal{status, code, body} }

func badRequest(format string, args ...any) *refusal {
	return refuse(http.StatusBadRequest, denyBadRequest, "bad request: "+fmt.Sprintf(format, args...)+"\n")
}

var (
	refusedMisdirected = refuse(http.StatusMisdirectedRequest, denyMisdirected, "Host header does not match the request target\n")
	refusedHost        = refuse(http.StatusForbidden, denyHostNotAllowed, "Connection blocked by network allowlist\n")
	refusedPlaintext   = refuse(http.StatusForbidden, denyPlaintextHeaderSet, "the decider added headers to a plain HTTP request, which would carry them unencrypted: use https, or start srt proxy with --plaintext-header-set\n")
	refusedBodyless    = refuse(http.StatusForbidden, denyBodylessWithBody, "a GET or HEAD request must not carry a body\n")
)

// write sends the refusal; the body is left out for HEAD.
func (r *refusal) write(w *bufio.Writer, head, close bool) error {
	fmt.Fprintf(w, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nX-Deny-Reason: %s\r\nContent-Length: %d\r\n", r.status, http.StatusText(r.status), r.code, len(r.body))
	if close {
		w.WriteString("Connection: close\r\n")
	}
	w.WriteString("\r\n")
	if !head {
		w.WriteString(r.body)
	}
	return w.Flush()
}

// rawRefusal is a refusal of a CONNECT: the connection closes after it.
func (r *refusal) raw() string {
	return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nX-Deny-Reason: %s\r\n\r\n%s", r.status, http.StatusText(r.status), r.code, strings.TrimSuffix(r.body, "\n"))
}

// rawHead is a request head as the client wrote it.
type rawHead struct {
	method, target string
	hosts          []string // the Host header values
	hasCL, hasTE   bool
}

var errHeadTooLarge = errors.New("request head too large")

// readHead reads one request head, up to and including the empty line,
// skipping empty lines before the request line.
func readHead(br *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		if len(head)+len(line) > maxFilteredHead {
			return nil, errHeadTooLarge
		}
		if err == bufio.ErrBufferFull {
			head = append(head, line...)
			continue
		}
		if err != nil {
			if len(head) > 0 || len(line) > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if len(head) == 0 && (string(line) == "\r\n" || string(line) == "\n") {
			continue
		}
		head = append(head, line...)
		if bytes.HasSuffix(head, []byte("\n\r\n")) || bytes.HasSuffix(head, []byte("\n\n")) {
			return head, nil
		}
	}
}

// parseHead reads what net/http does not keep (the Host header as sent,
// the request target as spelled) and lets it parse the rest.
func parseHead(head []byte) (*rawHead, *http.Request, error) {
	lines := strings.Split(strings.ReplaceAll(string(head), "\r\n", "\n"), "\n")
	parts := strings.Split(lines[0], " ")
	if len(parts) != 3 {
		return nil, nil, errors.New("malformed request line")
	}
	h := &rawHead{method: parts[0], target: parts[1]}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		switch strings.ToLower(name) {
		case "host":
			h.hosts = append(h.hosts, strings.Trim(value, " \t"))
		case "content-length":
			h.hasCL = true
		case "transfer-encoding":
			h.hasTE = true
		}
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return nil, nil, fmt.Errorf("invalid header name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, nil, fmt.Errorf("invalid value of header %s", k)
			}
		}
	}
	if h.hasCL && h.hasTE {
		return nil, nil, errors.New("both Content-Length and Transfer-Encoding")
	}
	if len(req.TransferEncoding) > 0 && (len(req.TransferEncoding) != 1 || req.TransferEncoding[0] != "chunked") {
		return nil, nil, errors.New("a Transfer-Encoding other than chunked")
	}
	return h, req, nil
}

// requestBody is the body of a request read by the filtered proxy. Close
// (the transport calls it when it has sent the body) lets the connection
// read the next request.
type requestBody struct {
	r      io.Reader
	once   sync.Once
	closed chan struct{}
}

func newRequestBody(br *bufio.Reader, req *http.Request) *requestBody {
	var r io.Reader
	switch {
	case len(req.TransferEncoding) > 0:
		r = &chunkedBody{r: httputil.NewChunkedReader(br), br: br}
	case req.ContentLength > 0:
		r = io.LimitReader(br, req.ContentLength)
	default:
		return nil
	}
	return &requestBody{r: r, closed: make(chan struct{})}
}

func (b *requestBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *requestBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// chunkedBody reads a chunked body and the trailer after it.
type chunkedBody struct {
	r   io.Reader
	br  *bufio.Reader
	end bool
}

func (c *chunkedBody) Read(p []byte) (int, error) {
	if c.end {
		return 0, io.EOF
	}
	n, err := c.r.Read(p)
	if err == io.EOF {
		c.end = true
		for size := 0; ; {
			line, lerr := c.br.ReadSlice('\n')
			if size += len(line); lerr != nil || size > 64<<10 {
				return n, io.ErrUnexpectedEOF
			}
			if string(line) == "\r\n" || string(line) == "\n" {
				break
			}
		}
	}
	return n, err
}

// reqHeaders returns the headers of the req frame, lower-case names, and
// refuses what the limits do not allow.
func reqHeaders(h http.Header) (map[string][]string, *refusal) {
	out := map[string][]string{}
	count, size := 0, 0
	for k, vs := range h {
		name := strings.ToLower(k)
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return nil, badRequest("the %s header is not UTF-8", name)
			}
			count++
			size += len(name) + len(v)
		}
		out[name] = append(out[name], vs...)
	}
	if count > maxReqHeaderVals || size > maxReqHeaderSize {
		return nil, badRequest("too many headers for the decider (%d values, %d bytes; the limits are %d and %d)", count, size, maxReqHeaderVals, maxReqHeaderSize)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// applyVerdict edits the outgoing headers as an allow verdict says, for a
// request to host.
//
// A header is removed (or replaced) in every spelling of - _ and ., as
// servers that map header names to variables (CGI, WSGI) read
// X_Api_Key as x-api-key.
func applyVerdict(h http.Header, v decider.Verdict, host string) {
	for _, name := range v.RemoveHeaders {
		delFolded(h, name)
	}
	for name, values := range v.SetHeaders {
		delFolded(h, name)
		for _, value := range values {
			h.Add(name, value)
		}
	}
	if v.Cred != "" {
		for _, name := range []string{"authorization", "proxy-authorization", "cookie", "x-api-key"} {
			delFolded(h, name)
		}
		h.Set("Authorization", credentialValue(v.Cred, v.Credential, host))
	}
}

// delFolded removes every header whose name folds to name's.
func delFolded(h http.Header, name string) {
	f := foldName(name)
	for k := range h {
		if foldName(k) == f {
			delete(h, k)
		}
	}
}

// credentialValue places a credential: a github credential to github.com
// goes as Basic with the user x-access-token (what git over https sends);
// anything else as a Bearer token.
func credentialValue(class, value, host string) string {
	if class == "github" && host == "github.com" {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+value))
	}
	return "Bearer " + value
}

// sameAuthority reports whether an authority (host[:port], as in a Host
// header) names host (canonical) on port, the port defaulting to def.
func sameAuthority(auth, host string, port, def int) (bool, *refusal) {
	h, p, r := authorityOf(auth, def)
	if r != nil {
		return false, r
	}
	return h == host && p == port, nil
}

// authorityOf reads an authority (host[:port], as in a Host header): the
// host in canonical form (policy.CanonicalHost, as the policy reads a
// host) and the port, def when it has none.
func authorityOf(auth string, def int) (string, int, *refusal) {
	for i := 0; i < len(auth); i++ {
		if auth[i] <= ' ' || auth[i] >= 0x7f {
			return "", 0, badRequest("the host %q is not plain ASCII", auth)
		}
	}
	h, p := auth, def
	if i := strings.LastIndexByte(auth, ':'); i >= 0 && !strings.HasSuffix(auth, "]") {
		n, err := strconv.Atoi(auth[i+1:])
		if err != nil || n < 1 || n > 65535 {
			return "", 0, badRequest("the port of %q", auth)
		}
		h, p = auth[:i], n
	}
	canon, err := policy.CanonicalHost(h)
	if err != nil {
		return "", 0, badRequest("the host %q is malformed", auth)
	}
	return canon, p, nil
}
