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
// any response, compressed or not; a host it may be stored at
// (bodyInjectHosts) can hand it back from any host of its service. Such
// responses are therefore read whole before they reach the command
// (readsAll): requests ask for an unencoded answer and for no part of
// one (askReadable), a body that comes Content-Encoded anyway is decoded
// when the Go standard library can (gzip, deflate) and refused
// otherwise, a partial response (206) is refused, and the real values
// are taken out in their re-encoded forms too (Injector.scrub).
// Responses from other hosts, which never receive a real value through
// the proxy and can store none, have their plain bodies swapped and
// their encoded ones left alone.

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

// stored reports whether a real value may be swapped into what some
// host keeps (a credential has bodyInjectHosts): whatever host of the
// service hands it back, any response may then carry it.
func (in *Injector) stored() bool {
	if in == nil {
		return false
	}
	for _, s := range in.Secrets {
		if s.Real != "" && s.BodyInject != nil {
			return true
		}
	}
	return false
}

// readsAll reports whether the responses of host are read whole before
// the command gets them: it may receive a real value (scoped), or any
// host may hand back one that was stored (stored).
func (in *Injector) readsAll(host string) bool {
	return in.scoped(host) || in.stored()
}

// because says why the responses of host are read whole, for refusals.
func (in *Injector) because(host string) string {
	if in.scoped(host) {
		return "a masked credential may be injected into this host"
	}
	return "a masked credential may be stored at a host of this run (bodyInjectHosts), and any host may hand it back"
}

// askReadable asks the upstream for a whole, unencoded response body:
// no coding (Accept-Encoding: identity; RFC 9110 §12.5.3: without the
// header any coding would be acceptable) and no range (Range and
// If-Range removed, RFC 9110 §14.2: the server then sends the whole
// representation). A stored real value read back in pieces would reach
// the command as pieces no scrubbing recognises.
func askReadable(h http.Header) {
	askIdentity(h)
	for name := range unreadable {
		h.Del(name)
	}
}

// unreadable are the request headers askReadable removes (lower case).
var unreadable = map[string]bool{"range": true, "if-range": true}

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

// partial is why a response was refused: it is a part of a body
// (206), which may hold a piece of a real value no scrubbing recognises.
type partial struct{}

func (partial) Error() string {
	return "it is a part of a body (206 Partial Content), which may hold a piece of a stored real value that srt could not recognise; srt does not forward Range to this host, so ask for the whole body"
}

// scrub readies resp, from host, for the command: every real value in
// its headers and body becomes its stand-in. A response of a host whose
// responses are read whole (readsAll) is refused when it is partial (a
// *partial error); its encoded body is decoded first (gzip, x-gzip,
// deflate, in any stack) and goes unencoded, any other coding being an
// *unscrubbable error; and the real values' re-encoded forms are taken
// out too. resp must not reach the command after an error. A body that
// turns out not to decode ends in a read error, which aborts the
// response.
func (in *Injector) scrub(resp *http.Response, host string) error {
	if in == nil {
		return nil
	}
	all := in.readsAll(host)
	set := in.scrubbing(all)
	if len(set.pairs) == 0 {
		return nil
	}
	if all && resp.StatusCode == http.StatusPartialContent {
		return partial{}
	}
	if all && resp.Body != nil && resp.Body != http.NoBody {
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
	swapResponse(resp, set)
	return nil
}

// refuseResponse answers a response the proxy would not pass on (an
// error of scrub).
func (in *Injector) refuseResponse(w http.ResponseWriter, host string, err error) {
	kind := "unreadable-content-encoding"
	if _, ok := err.(partial); ok {
		kind = "partial-content-refused"
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Proxy-Error", kind)
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "srt refused the response of %s: %v; %s, so its responses must be read whole (srt asks for Accept-Encoding: identity and no Range)\n", host, err, in.because(host))
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

// scrubHeader puts the stand-ins back into headers of a response of
// host that come after a body (trailers) or without one (a protocol
// switch, an informational response).
func (in *Injector) scrubHeader(h http.Header, host string) {
	if in == nil {
		return
	}
	swapHeader(h, in.inbound(in.readsAll(host)))
}

// streamable reports whether the responses of host may reach the
// command unread (readsAll). A protocol switch (WebSocket) to any other
// host is refused, since its stream cannot be scrubbed.
func (in *Injector) streamable(host string) bool {
	return in == nil || len(in.inbound(false)) == 0 || !in.readsAll(host)
}

// refuseUpgrade answers a protocol switch to a host whose responses must
// be scrubbed.
func (in *Injector) refuseUpgrade(w http.ResponseWriter, host, protocol string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Proxy-Error", "upgrade-refused")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, "srt refused to switch the connection to %s to %q: %s, so everything it sends must be read for the credential, and a switched connection cannot be\n", host, protocol, in.because(host))
}
