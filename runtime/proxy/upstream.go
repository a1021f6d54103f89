package proxy

// Upstream routes: where an allowed connection leaves when srt does not
// dial the destination itself. The policy decides first, always; a route
// only says how an allowed connection travels:
//
//  1. network.mitmProxy: a destination matching its domains goes to an
//     external inspecting proxy over its Unix socket, and nowhere else
//     (a failure there is the connection's failure, never a fallback);
//  2. network.parentProxy (or srt's own HTTP_PROXY, HTTPS_PROXY and
//     NO_PROXY): a destination that NO_PROXY does not exempt goes through
//     the parent's CONNECT, or as an absolute-form request to it;
//  3. otherwise srt resolves, vets (the resolved-address guard) and dials.
//
// On the first two routes the next hop resolves the name, so the guard,
// which judges the addresses srt is about to dial, has nothing to judge:
// the names are still held to the allow and deny lists, and what the
// upstream proxy may reach is its own policy's business.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"srt.dev/compiler/policy"
)

// A Parent is the upstream HTTP proxy srt itself uses (ParentFrom). It is
// fixed when srt starts.
type Parent struct {
	// HTTP carries plain HTTP requests (absolute-form); HTTPS carries
	// CONNECT tunnels, SOCKS connections and https:// requests (through
	// its CONNECT). nil means direct.
	HTTP, HTTPS *url.URL
	// NoProxy lists the destinations that go direct.
	NoProxy policy.NoProxy
	// RootCAs verify an https parent's certificate; nil means the
	// system's roots.
	RootCAs *x509.CertPool
}

// ParentFrom resolves the parent proxy: each of http, https and noProxy
// from the settings when given, else from srt's own environment (upper
// case first, then lower case); https falls back to http. A value without
// "://" is read as http://value. A value whose scheme is not http or
// https, or that names no host, is left out, with a note saying so. nil
// means no parent.
func ParentFrom(httpSetting, httpsSetting, noProxySetting string, getenv func(string) string) (*Parent, []string) {
	pick := func(setting string, names ...string) string {
		if setting != "" {
			return setting
		}
		for _, n := range names {
			if v := getenv(n); v != "" {
				return v
			}
		}
		return ""
	}
	var notes []string
	parse := func(what, v string) *url.URL {
		if v == "" {
			return nil
		}
		if !strings.Contains(v, "://") {
			v = "http://" + v
		}
		u, err := url.Parse(v)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("parent proxy for %s ignored: %v", what, err))
			return nil
		case u.Scheme != "http" && u.Scheme != "https":
			notes = append(notes, fmt.Sprintf("parent proxy for %s ignored: scheme %q (only http and https are used)", what, u.Scheme))
			return nil
		case u.Hostname() == "":
			notes = append(notes, fmt.Sprintf("parent proxy for %s ignored: no host", what))
			return nil
		}
		return u
	}
	httpURL := pick(httpSetting, "HTTP_PROXY", "http_proxy")
	httpsURL := pick(httpsSetting, "HTTPS_PROXY", "https_proxy")
	if httpsURL == "" {
		httpsURL = httpURL
	}
	p := &Parent{HTTP: parse("http", httpURL), HTTPS: parse("https", httpsURL),
		NoProxy: policy.ParseNoProxy(pick(noProxySetting, "NO_PROXY", "no_proxy"))}
	if p.HTTP == nil && p.HTTPS == nil {
		return nil, notes
	}
	return p, notes
}

// String describes the parent without its credentials, for the debug log.
func (p *Parent) String() string {
	show := func(u *url.URL) string {
		if u == nil {
			return "direct"
		}
		return u.Scheme + "://" + u.Host
	}
	return fmt.Sprintf("http %s, https %s, noProxy %q", show(p.HTTP), show(p.HTTPS), p.NoProxy.Text)
}

// A Mitm is the network.mitmProxy route: destinations whose host matches
// Domains go to the proxy listening on the Unix socket SocketPath.
type Mitm struct {
	SocketPath string
	// Domains are host patterns (policy.ParseHostPattern): "*.example.com"
	// (names below it), a name, or an IP address; case-insensitive, no
	// ports.
	Domains policy.HostList
}

// Match reports whether a canonical host is one of m's domains.
func (m *Mitm) Match(host string) bool {
	_, ok := m.Domains.Match(host, 0)
	return ok
}

// A hop is the upstream proxy an allowed connection goes through.
type hop struct {
	name string // for the debug log: "mitmProxy unix:/…" or "parent proxy http://host:port"
	// dial opens a connection to the proxy.
	dial func(ctx context.Context) (net.Conn, error)
	// auth is the Proxy-Authorization value it needs, "" for none.
	auth string
}

// upstreamTimeout bounds the dial to an upstream proxy and its CONNECT
// answer.
const upstreamTimeout = 30 * time.Second

// maxUpstreamHead caps the upstream proxy's answer to CONNECT.
const maxUpstreamHead = 16 << 10

// route returns the upstream proxy an allowed connection to host (canonical)
// goes through, or nil to dial it directly. tunnel is true for a CONNECT
// tunnel, a SOCKS connection or an https:// request, false for a plain
// HTTP request.
func (e *Egress) route(host string, tunnel bool) *hop {
	if e.Mitm != nil {
		if m := e.Mitm(); m != nil && m.Match(host) {
			path := m.SocketPath
			return &hop{name: "mitmProxy unix:" + path, dial: func(ctx context.Context) (net.Conn, error) {
				d := net.Dialer{Timeout: upstreamTimeout}
				return d.DialContext(ctx, "unix", path)
			}}
		}
	}
	p := e.Parent
	if p == nil || policy.IsLoopbackHost(host) || p.NoProxy.Match(host) {
		return nil
	}
	u := p.HTTP
	if tunnel {
		u = p.HTTPS
	}
	if u == nil {
		return nil
	}
	return parentHop(u, p.RootCAs)
}

// parentHop is the hop to the parent proxy at u: TCP, or TLS for an https
// URL; its userinfo becomes Basic credentials.
func parentHop(u *url.URL, roots *x509.CertPool) *hop {
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	h := &hop{name: "parent proxy " + u.Scheme + "://" + addr}
	if u.User != nil {
		pass, _ := u.User.Password()
		h.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
	}
	secure, serverName := u.Scheme == "https", u.Hostname()
	h.dial = func(ctx context.Context) (net.Conn, error) {
		d := net.Dialer{Timeout: upstreamTimeout}
		if secure {
			td := tls.Dialer{NetDialer: &d, Config: &tls.Config{ServerName: serverName, RootCAs: roots}}
			return td.DialContext(ctx, "tcp", addr)
		}
		return d.DialContext(ctx, "tcp", addr)
	}
	return h
}

// upstreamError is a failure of an upstream proxy: the connection fails
// like a failed dial (502, SOCKS 0x04).
type upstreamError struct {
	hop string
	err error
}

func (e *upstreamError) Error() string { return e.hop + ": " + e.err.Error() }
func (e *upstreamError) Unwrap() error { return e.err }

// open connects through h: for a tunnel, a CONNECT to host:port that the
// proxy must answer 2xx, leaving a connection that carries the bytes to
// the destination; for a plain request, the connection to the proxy
// itself, to which the caller writes an absolute-form request with
// h.auth.
func (h *hop) open(ctx context.Context, host string, port int, tunnel bool) (net.Conn, error) {
	c, err := h.dial(ctx)
	if err != nil {
		return nil, &upstreamError{h.name, err}
	}
	if !tunnel {
		return c, nil
	}
	c.SetDeadline(time.Now().Add(upstreamTimeout))
	target := net.JoinHostPort(host, strconv.Itoa(port))
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if h.auth != "" {
		req += "Proxy-Authorization: " + h.auth + "\r\n"
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		c.Close()
		return nil, &upstreamError{h.name, err}
	}
	br := bufio.NewReaderSize(&io.LimitedReader{R: c, N: maxUpstreamHead}, 4096)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299 || resp.ProtoMajor != 1) {
		err = fmt.Errorf("CONNECT %s answered %q", target, resp.Status)
	}
	if err != nil {
		c.Close()
		return nil, &upstreamError{h.name, err}
	}
	c.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// The destination spoke first (an SSH banner) in the same read.
		b, _ := br.Peek(br.Buffered())
		return &prefixConn{Conn: c, prefix: append([]byte(nil), b...)}, nil
	}
	return c, nil
}

// prefixConn reads prefix before the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

func (c *prefixConn) CloseWrite() error {
	type closeWriter interface{ CloseWrite() error }
	if cw, ok := c.Conn.(closeWriter); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// viaUpstream connects to an allowed destination through the route the
// settings give it, if any: it returns ok=false when the destination is
// dialled directly. For a plain request, h is the proxy to write an
// absolute-form request to.
func (e *Egress) viaUpstream(ctx context.Context, host string, port int, tunnel bool) (c net.Conn, h *hop, ok bool, err error) {
	h = e.route(host, tunnel)
	if h == nil {
		return nil, nil, false, nil
	}
	e.debug("upstream route", "host", host, "port", port, "via", h.name)
	c, err = h.open(ctx, host, port, tunnel)
	if err != nil {
		e.debug("upstream failed", "host", host, "port", port, "via", h.name, "err", err)
	}
	return c, h, true, err
}

// InterfaceAddrs are this host's interface addresses, read at each call:
// what the address guard calls the host's own addresses.
func InterfaceAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr())
		}
	}
	return out
}

// Relay serves l until ctx ends, joining each connection it accepts to a
// new one from dial (srt's relay to an external proxy port), as a
// tunnel that closes after DefaultTunnelIdle without a byte. It shuts
// down as HTTP.Serve does; failed dials go to onError.
func Relay(ctx context.Context, l net.Listener, dial func(context.Context) (net.Conn, error), onError func(error)) error {
	set := newConnSet(ctx)
	err := acceptLoop(ctx, l, set, true, func(ctx context.Context, c net.Conn) {
		up, err := dial(ctx)
		if err != nil {
			if onError != nil {
				onError(err)
			}
			return
		}
		defer up.Close()
		defer closeWith(ctx, up)()
		tunnel(c, up, DefaultTunnelIdle)
	})
	set.shutdown(0)
	return err
}
