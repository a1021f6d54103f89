package proxy

// The forwarder. Every HTTP request the proxies pass on (an absolute-form
// request, a request inside a terminated tunnel, a request of srt
// proxy's filtered mode) goes upstream and back through exchange:
//
//   - the request is written on a connection of its own (an upConn),
//     while the response is read, so that an upstream that answers
//     before it has read the whole body (413) is heard;
//   - informational responses (103) are passed on as they come; 100
//     Continue is the client side's business (net/http's server, or
//     fconn.continueBody);
//   - a protocol switch (101: WebSocket) becomes a tunnel, unless the
//     host's responses must all be read (Injector.streamable);
//   - the response is scrubbed (Injector.scrub), stripped of its hop-by-
//     hop headers, and its body relayed as it arrives: flushed whenever
//     the upstream pauses (server-sent events arrive event by event),
//     with its trailers, and cut short, never completed, when the
//     upstream breaks off (a truncated body reaches the client as an
//     error);
//   - a body nothing rewrites, from a plain TCP upstream, with a length,
//     is read straight from the socket, in reads of up to 1 MiB and
//     without a buffer while it waits (pump.go).
//
// It is written here rather than on httputil.ReverseProxy, whose copy
// loop reads every body through its http.Transport's buffered reader in
// 32 KiB pieces, holding the buffer while it waits, whose Transport
// pools connections by address (a terminated tunnel's requests must
// stay on the connection the policy allowed, and every new one must be
// dialled through the policy), and which cannot write a response on the
// connections filtered mode reads by hand.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// hopHeaders are removed before forwarding, in both directions (RFC 9110
// §7.6.1), with the proxy's own headers.
var hopHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Proxy-Connection",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

var foldedHop = func() map[string]bool {
	m := map[string]bool{}
	for _, h := range hopHeaders {
		m[foldName(h)] = true
	}
	return m
}()

// foldName is a header name as the hop-by-hop and strip lists compare
// it: lower case, with _ and . read as -.
func foldName(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '_' || r == '.':
			return '-'
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, name)
}

// stripHop removes the hop-by-hop headers, those the Connection header
// names and those of extra, each in any spelling of - _ and . (a server
// behind a gateway that maps _ to - would otherwise read a
// Proxy_Authorization as the proxy's credentials).
func stripHop(h http.Header, extra map[string]bool) {
	named := map[string]bool{}
	for k, vs := range h {
		if foldName(k) != "connection" {
			continue
		}
		for _, v := range vs {
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					named[foldName(n)] = true
				}
			}
		}
	}
	for k := range h {
		f := foldName(k)
		if foldedHop[f] || named[f] || extra[f] {
			delete(h, k)
		}
	}
}

// upgradeOf is the protocol a request asks to switch to (the Upgrade
// header, when the Connection header names it), or "".
func upgradeOf(h http.Header) string {
	if !httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade") {
		return ""
	}
	return h.Get("Upgrade")
}

// outbound readies the headers of a request for the upstream: the hop-
// by-hop ones go, except a protocol switch (kept when upgrade is set)
// and "TE: trailers", which says the client reads trailers.
func outbound(h http.Header, upgrade bool) {
	up := upgradeOf(h)
	trailers := httpguts.HeaderValuesContainsToken(h["Te"], "trailers")
	stripHop(h, nil)
	if up != "" && upgrade {
		h.Set("Connection", "Upgrade")
		h.Set("Upgrade", up)
	}
	if trailers {
		h.Set("Te", "trailers")
	}
}

// An upConn is a connection requests go upstream on: to the server
// itself (TCP, or TLS over it), or, for plain HTTP through an upstream
// proxy, to that proxy.
type upConn struct {
	conn net.Conn
	br   *bufio.Reader
	// tcp is the connection a body may be read from directly: conn itself
	// when nothing (TLS) wraps it, else nil.
	tcp *net.TCPConn
	// via is the upstream proxy that takes plain requests in absolute
	// form, with its credentials; nil when conn is to the server.
	via *hop
	// key is where the connection goes ("https://host:port"), for reuse.
	key string
	// stop detaches conn from the context it closes with.
	stop func() bool
	// used is set once conn has carried a request.
	used bool
}

// newUpConn wraps c, which closes when life ends.
func newUpConn(life context.Context, c net.Conn, via *hop, key string) *upConn {
	uc := &upConn{conn: c, br: bufio.NewReaderSize(c, 16<<10), via: via, key: key}
	uc.tcp, _ = c.(*net.TCPConn)
	uc.stop = closeWith(life, c)
	return uc
}

func (uc *upConn) close() {
	uc.stop()
	uc.conn.Close()
}

// stale reports whether an idle connection can no longer carry a
// request: the upstream closed it, or sent something unasked.
func (uc *upConn) stale() bool {
	if uc.br.Buffered() > 0 {
		return true
	}
	uc.conn.SetReadDeadline(time.Now())
	_, err := uc.br.Peek(1)
	uc.conn.SetReadDeadline(time.Time{})
	return !isTimeout(err)
}

// roundTrip writes out on uc and reads the response head, handing
// informational responses (but 100 Continue) to inform as they come.
// The request is written while the response is read; wrote reports how
// that ended. The writing goroutine may wait on the client for the
// request's body: it ends when the body ends, or when the client's
// connection does.
func (uc *upConn) roundTrip(out *http.Request, inform func(*http.Response)) (resp *http.Response, wrote <-chan error, err error) {
	done := make(chan error, 1)
	go func() {
		var err error
		if uc.via != nil {
			out.URL.Scheme = "http"
			if uc.via.auth != "" {
				out.Header.Set("Proxy-Authorization", uc.via.auth)
			}
			err = out.WriteProxy(uc.conn)
		} else {
			err = out.Write(uc.conn)
		}
		done <- err
	}()
	for {
		resp, err = http.ReadResponse(uc.br, out)
		if err != nil {
			// The write's error, if it has one yet, says more (a reset).
			uc.conn.Close()
			select {
			case werr := <-done:
				if werr != nil {
					err = werr
				}
			default:
			}
			return nil, nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols || resp.StatusCode < 100 {
			return resp, done, nil
		}
		if resp.StatusCode != http.StatusContinue {
			inform(resp)
		}
	}
}

// inform passes an informational response (103 Early Hints) on to w,
// scrubbed and stripped like a final one.
func (rl *relay) inform(w http.ResponseWriter, resp *http.Response) {
	rl.e.Inject.scrubHeader(resp.Header, rl.host)
	stripHop(resp.Header, rl.strip)
	h := w.Header()
	saved := h.Clone()
	clear(h)
	for k, vs := range resp.Header {
		h[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	clear(h)
	for k, vs := range saved {
		h[k] = vs
	}
}

// A relay is what exchange needs to know about the request it forwards.
type relay struct {
	e    *Egress
	host string // canonical host the request goes to
	// strip names response headers removed beyond the hop-by-hop ones
	// (foldName spelling).
	strip map[string]bool
	// keepAlive, when set, is sent as the response's Keep-Alive header.
	keepAlive string
	// upgrade is the protocol the request asked to switch to, "" for
	// none.
	upgrade string
}

// errAborted is a response cut short: the client's connection must end
// without completing it.
var errAborted = errors.New("response aborted")

// exchange forwards out (ready to go: headers outbound, credentials
// swapped) on uc and relays the response to w. It returns whether uc can
// carry another request. With an error and written false nothing was
// written to w: the caller answers (502); errAborted means the response
// was started and must not be completed (net/http: panic with
// http.ErrAbortHandler).
func (rl *relay) exchange(w http.ResponseWriter, out *http.Request, uc *upConn) (reusable, written bool, err error) {
	// A client that goes away (or a Serve that ends) while the request is
	// in flight takes the upstream connection with it.
	gone := context.AfterFunc(out.Context(), func() { uc.conn.Close() })
	defer gone()
	resp, wrote, err := uc.roundTrip(out, func(resp *http.Response) { rl.inform(w, resp) })
	if err != nil {
		return false, false, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		gone() // the tunnel lives as long as both its ends do
		defer uc.conn.Close()
		if rl.upgrade == "" || !strings.EqualFold(upgradeOf(resp.Header), rl.upgrade) {
			return false, false, fmt.Errorf("the upstream switched to %q, which was not asked for", resp.Header.Get("Upgrade"))
		}
		return false, true, rl.switchProtocols(w, resp, uc)
	}
	finished := false
	defer func() {
		if !finished {
			uc.conn.Close()
		}
	}()
	original := resp.Body
	if err := rl.e.Inject.scrub(resp, rl.host); err != nil {
		rl.e.debug("response refused", "host", rl.host, "err", err)
		rl.e.Inject.refuseResponse(w, rl.host, err)
		return false, true, nil
	}
	unchanged := resp.Body == original
	if err := rl.relayResponse(w, resp, uc, unchanged); err != nil {
		return false, true, err
	}
	// The upstream may take the next request once the previous one has
	// gone whole (a decoder may stop short of the body's framing: what is
	// left of it is read, up to a little), and neither side asked to
	// close.
	if !gone() || !unchanged && !drained(original) {
		return false, true, nil
	}
	var werr error
	select {
	case werr = <-wrote:
	default:
		// The answer came in whole before the writer said it was done:
		// a request without a body is, or is about to be (a second at
		// most); one with a body the upstream did not read all of
		// leaves the connection.
		if out.Body != nil && out.Body != http.NoBody {
			return false, true, nil
		}
		t := time.NewTimer(time.Second)
		select {
		case werr = <-wrote:
		case <-t.C:
			werr = errors.New("the request was not written")
		}
		t.Stop()
	}
	finished = werr == nil && !resp.Close && !out.Close
	if finished {
		uc.used = true
	}
	return finished, true, nil
}

// drained reads what is left of a body, up to 4 KiB, and reports
// whether it ended there.
func drained(body io.Reader) bool {
	n, err := io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	return err == nil && n < 4<<10
}

// relayResponse writes resp to w. unchanged says nothing has replaced
// its body (no scrubbing, no decoding): it may then be read straight
// from the socket.
func (rl *relay) relayResponse(w http.ResponseWriter, resp *http.Response, uc *upConn, unchanged bool) error {
	stripHop(resp.Header, rl.strip)
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	bodyless := resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
	if resp.ContentLength >= 0 && !bodyless {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	announced := map[string]bool{}
	for k := range resp.Trailer {
		announced[k] = true
		h.Add("Trailer", k)
	}
	if rl.keepAlive != "" {
		h.Set("Keep-Alive", rl.keepAlive)
	}
	w.WriteHeader(resp.StatusCode)
	if resp.Body == nil || resp.Body == http.NoBody {
		return nil
	}
	if err := rl.relayBody(w, resp, uc, unchanged); err != nil {
		return err
	}
	if len(resp.Trailer) > 0 {
		rl.e.Inject.scrubHeader(resp.Trailer, rl.host)
		for k, vs := range resp.Trailer {
			if announced[k] {
				h[k] = vs
			} else {
				h[http.TrailerPrefix+k] = vs
			}
		}
	}
	return nil
}

// relayBody copies resp's body to w as it arrives (pump.go), flushing
// whenever the upstream pauses. A body nothing has rewritten, with a
// length, from a TCP upstream, is read straight from the socket (what
// uc's reader holds first): in large reads, and without a buffer while
// it waits. A body that breaks off, or waits longer than the tunnel idle
// time for a byte, aborts the response.
func (rl *relay) relayBody(w http.ResponseWriter, resp *http.Response, uc *upConn, unchanged bool) error {
	rc := http.NewResponseController(w)
	var p *pump
	direct := unchanged && uc.tcp != nil && resp.ContentLength > 0 && len(resp.TransferEncoding) == 0
	if direct {
		size := resp.ContentLength
		if k := min(int64(uc.br.Buffered()), size); k > 0 {
			b, _ := uc.br.Peek(int(k))
			if _, err := w.Write(b); err != nil {
				return errAborted
			}
			uc.br.Discard(int(k))
			size -= k
		}
		if directHook != nil {
			directHook(size)
		}
		p = newPump(w, uc.tcp)
		p.remain = size
		// Read past it: closing it would read on.
		resp.Body = http.NoBody
	} else {
		p = newPump(w, resp.Body)
	}
	p.flush = rc.Flush
	p.idleFor(uc.conn, rl.e.tunnelIdle())
	_, err := p.run()
	p.stop()
	switch {
	case err == nil && p.remain > 0:
		rl.e.debug("response body broke off", "host", rl.host, "missing", p.remain)
		return errAborted
	case err != nil:
		rl.e.debug("response body broke off", "host", rl.host, "err", err)
		return errAborted
	}
	return nil
}

// directHook, when set (by tests), is told the size of each body read
// straight from the upstream's socket.
var directHook func(size int64)

// switchProtocols answers a 101: the client's connection is taken over,
// told the switch, and joined to the upstream's.
func (rl *relay) switchProtocols(w http.ResponseWriter, resp *http.Response, uc *upConn) error {
	rl.e.Inject.scrubHeader(resp.Header, rl.host)
	up := resp.Header.Get("Upgrade")
	stripHop(resp.Header, rl.strip)
	resp.Header.Set("Connection", "Upgrade")
	resp.Header.Set("Upgrade", up)
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return errAborted
	}
	defer client.Close()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	resp.Header.Write(brw)
	brw.WriteString("\r\n")
	if err := brw.Flush(); err != nil {
		return nil
	}
	if err := drain(uc.conn, brw.Reader); err != nil {
		return nil
	}
	if err := drain(client, uc.br); err != nil {
		return nil
	}
	tunnel(client, uc.conn, rl.e.tunnelIdle())
	return nil
}

// drain writes what br holds to dst, so that a tunnel may then read the
// connection under br directly.
func drain(dst io.Writer, br *bufio.Reader) error {
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := dst.Write(b); err != nil {
			return err
		}
		br.Discard(n)
	}
	return nil
}

// upstreamTLS is the TLS configuration of a connection to an upstream
// server named host: verified against the one set of roots of the
// proxies (the system's and tlsTerminate's extraCaCertPaths), HTTP/1.1.
func (e *Egress) upstreamTLS(host string) *tls.Config {
	c := &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
	if e.TLS != nil {
		c.RootCAs = e.TLS.Roots
	}
	return c
}

// tlsClient completes a TLS handshake over raw with the server host.
func (e *Egress) tlsClient(ctx context.Context, raw net.Conn, host string) (*tls.Conn, error) {
	tc := tls.Client(raw, e.upstreamTLS(host))
	if err := tc.HandshakeContext(ctx); err != nil {
		raw.Close()
		return nil, err
	}
	return tc, nil
}

// An upSlot keeps one idle upstream connection for the next request of
// a client connection (or terminated tunnel) that goes to the same
// place.
type upSlot struct {
	idle *upConn
}

// take returns the idle connection to key, if it can still carry a
// request; any other is closed.
func (s *upSlot) take(key string) *upConn {
	uc := s.idle
	s.idle = nil
	if uc == nil {
		return nil
	}
	if uc.key != key || uc.stale() {
		uc.close()
		return nil
	}
	return uc
}

// put keeps uc for the next request (closing the one kept before).
func (s *upSlot) put(uc *upConn) {
	if s.idle != nil && s.idle != uc {
		s.idle.close()
	}
	s.idle = uc
}

func (s *upSlot) close() {
	if s.idle != nil {
		s.idle.close()
		s.idle = nil
	}
}

// retryable reports whether a request that failed on a reused
// connection may be sent again on a new one: the upstream closed the
// idle connection as the request went, and the request has no body
// that was consumed.
func retryable(out *http.Request, uc *upConn) bool {
	return uc.used && (out.Body == nil || out.Body == http.NoBody)
}
