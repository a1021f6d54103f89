package proxy

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// A host a masked credential may be injected into can echo it back, in
// any response, compressed or not. Its responses are therefore always
// read before they reach the command: requests to it ask for an
// unencoded answer (askIdentity), a body that comes Content-Encoded
// anyway is decoded when the Go standard library can (gzip, deflate)
// and refused otherwise (Injector.scrub). Responses from other hosts,
// which never receive a real value through the proxy, have their plain
// bodies swapped and their encoded ones left alone.

// scoped reports whether a masked credential may be injected into host
// (canonical, without port).
func (in *Injector) scoped(host string) bool {
	if in == nil {
		return false
	}
	for _, s := range in.Secrets {
		if s.Real != "" && s.Inject != nil && s.Inject(host) {
			return true
		}
	}
	for _, k := range in.AWS {
		if k.Inject != nil && k.Inject(host) {
			return true
		}
	}
	return false
}

// askIdentity asks the upstream for an unencoded response body (RFC 9110
// §12.5.3: without the header any coding would be acceptable).
func askIdentity(h http.Header) {
	h.Set("Accept-Encoding", "identity")
}

// contentCodings lists the codings of a Content-Encoding header in the
// order they were applied, identity left out, lower case.
func contentCodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
				out = append(out, c)
			}
		}
	}
	return out
}

// unscrubbable is why a response was refused: its body is encoded in a
// way the proxy cannot read.
type unscrubbable struct{ coding string }

func (u *unscrubbable) Error() string {
	return fmt.Sprintf("the response is encoded with %q, which srt cannot decode to take masked credentials out of it", u.coding)
}

// scrub readies resp, from host, for the command: every real value in
// its headers and body becomes its stand-in. For a host a credential
// may be injected into, an encoded body is decoded first (gzip, x-gzip,
// deflate, in any stack) and the response goes unencoded; any other
// coding is an *unscrubbable error, and resp must then not reach the
// command. A body that turns out not to decode ends in a read error,
// which aborts the response.
func (in *Injector) scrub(resp *http.Response, host string) error {
	if in == nil {
		return nil
	}
	pairs := in.inbound()
	if len(pairs) == 0 {
		return nil
	}
	if in.scoped(host) && resp.Body != nil && resp.Body != http.NoBody {
		codings := contentCodings(resp.Header)
		for _, c := range codings {
			if c != "gzip" && c != "x-gzip" && c != "deflate" {
				return &unscrubbable{c}
			}
		}
		if len(codings) > 0 {
			resp.Body = &decodedBody{r: resp.Body, closer: resp.Body, codings: codings}
			resp.Header.Del("Content-Encoding")
			resp.Header.Del("Content-Length")
			resp.ContentLength = -1
		}
	}
	swapResponse(resp, pairs)
	return nil
}

// refuseUnscrubbable answers a response the proxy could not scrub.
func refuseUnscrubbable(w http.ResponseWriter, host string, err error) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Proxy-Error", "unreadable-content-encoding")
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "srt refused the response of %s: %v; a masked credential may be injected into this host, so its responses must be readable (srt asks for Accept-Encoding: identity)\n", host, err)
}

// decodedBody undoes the codings of a body, last applied first. The
// decoders are made at the first Read, so that a body that is empty
// (a 201 with Content-Encoding: gzip) reads as empty.
type decodedBody struct {
	r       io.Reader
	closer  io.Closer
	codings []string
	started bool
}

func (d *decodedBody) Read(p []byte) (int, error) {
	if !d.started {
		d.started = true
		br := bufio.NewReader(d.r)
		if _, err := br.Peek(1); err != nil {
			if err == io.EOF {
				d.r = br
				return 0, io.EOF
			}
			return 0, err
		}
		var r io.Reader = br
		for i := len(d.codings) - 1; i >= 0; i-- {
			dec, err := decoder(d.codings[i], r)
			if err != nil {
				d.r = errReader{err}
				return 0, err
			}
			r = dec
		}
		d.r = r
	}
	return d.r.Read(p)
}

func (d *decodedBody) Close() error { return d.closer.Close() }

// decoder reads r as coding (gzip, x-gzip or deflate). "deflate" is the
// zlib format (RFC 9110 §8.4.1.2), but some servers send raw deflate
// (RFC 1951): the first two bytes tell them apart, as browsers do.
func decoder(coding string, r io.Reader) (io.Reader, error) {
	if coding != "deflate" {
		return gzip.NewReader(r)
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// scrubHeader puts the stand-ins back into headers that come after a
// body (trailers) or without one (a protocol switch).
func (in *Injector) scrubHeader(h http.Header) {
	if in == nil {
		return
	}
	swapHeader(h, in.inbound())
}

// streamable reports whether the responses of host may reach the
// command unread: no masked credential may be injected into it, so it
// has none to echo. A protocol switch (WebSocket) to any other host is
// refused, since its stream cannot be scrubbed.
func (in *Injector) streamable(host string) bool {
	return in == nil || len(in.inbound()) == 0 || !in.scoped(host)
}

// refuseUpgrade answers a protocol switch to a host whose responses must
// be scrubbed.
func refuseUpgrade(w http.ResponseWriter, host, protocol string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Proxy-Error", "upgrade-refused")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "srt refused to switch the connection to %s to %q: a masked credential may be injected into this host, so everything it sends must be read for the credential, and a switched connection cannot be\n", host, protocol)
}
