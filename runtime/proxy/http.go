// Package proxy is srt's egress: an HTTP proxy (CONNECT and absolute-form
// requests) and a SOCKS5 proxy that let the sandboxed command reach only
// what the network policy allows (docs/reference.md#network). Both ask the same
// decision function (compiler/policy/netpolicy), resolve an allowed name once, vet
// the addresses, and dial a survivor. With Egress.Filter set, the HTTP
// proxy runs in the filtered mode of srt proxy instead: every request is
// put to an external decider (package decider) under a fixed policy.
package proxy

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/internal/untrusted"
)

// An Event is one decision of the proxies: a connection allowed (the
// policy and the resolved-address guard let it through) or refused. The
// refusals are the violations; all of them make the audit log.
type Event struct {
	Time  time.Time
	Proxy string // "http", "connect" or "socks"
	Host  string // as the client spelled it (canonical for guard refusals)
	Port  int
	Allow bool
	// Reason says why a connection was refused.
	Reason string
	// Rule is the allowedDomains or deniedDomains entry that decided, if
	// one did; Stage is "policy", "guard" (the resolved-address check),
	// "host" (a request inside a terminated tunnel that names another
	// host than the tunnel's) or StageCredential (a request that went
	// with a stand-in where no real value goes).
	Rule  string
	Stage string
	// CommandID is the command's attribution key, base64 as in the proxy
	// user name "srt.<id>"; "" when none.
	CommandID string
	// Why explains a refusal in one line: what was refused, which rule
	// decided and what to change in which settings file
	// (netpolicy.Explain); "" when allowed or not known.
	Why string
}

// Line is a refusal as the reference writes it in its violation store;
// the host, which the command chose, is shown through untrusted.Quote.
// A stand-in left where no real value goes (Stage "credential") is
// srt's own line, "deny credential-inject host:port (reason)".
func (v Event) Line() string {
	op := "network-outbound"
	if v.Stage == StageCredential {
		op = "credential-inject"
	}
	return fmt.Sprintf("deny %s %s:%d (%s)", op, untrusted.Quote(v.Host), v.Port, netpolicy.SanitizeReason(v.Reason, 0))
}

// Egress holds what both proxies share. Fields documented as optional may
// be left zero.
type Egress struct {
	// Token is the proxy password clients must present; "" disables
	// authentication (only for tests and external callers that filter).
	Token string
	// Rules returns the policy in force; it is called once per decision,
	// so a new policy applies to the next connection.
	Rules func() *netpolicy.Rules
	// Listed and HostAddrs configure the resolved-address guard.
	Listed    func() []netip.Prefix
	HostAddrs func() []netip.Addr
	// Resolve looks a name up; nil means the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address that passed; nil means a TCP dial with
	// a 30 s timeout.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// OnDecision records every decision (see Event); optional. It is
	// called on the connection's goroutine: it must not block.
	OnDecision func(Event)
	// Command, when set, is the attribution key of every connection,
	// whatever user name the client sends: srt sets it for the
	// listeners of one sandbox, so that a command cannot claim another
	// command's identity (or its per-command allow list).
	Command string
	// Log receives debug lines; nil means none.
	Log *slog.Logger
	// TunnelIdle is how long a tunnel may carry no byte in either
	// direction before it is closed; 0 means DefaultTunnelIdle,
	// negative never.
	TunnelIdle time.Duration
	// TLS, when set, terminates the TLS of allowed tunnels (see
	// Terminator); nil leaves every tunnel opaque.
	TLS *Terminator
	// Inject swaps masked credentials into requests that may carry
	// them, and back out of responses; nil swaps nothing.
	Inject *Injector
	// Parent and Mitm are the upstream routes (upstream.go); optional.
	// Mitm is called once per connection, so that a new route applies to
	// the next one.
	Parent *Parent
	Mitm   func() *Mitm
	// Filter, when set, runs the HTTP proxy in filtered mode (see
	// Filter): every request is put to an external decider. Token,
	// Inject, Parent and Mitm do not apply then.
	Filter *Filter
}

// guardError carries the guard's reason, and the explanation of the
// refusal (netpolicy.ExplainGuard).
type guardError struct{ reason, why string }

func (e *guardError) Error() string { return e.reason }

// policyError is a refusal by the policy, with its explanation
// (netpolicy.Explain).
type policyError struct{ why string }

func (e *policyError) Error() string { return e.why }

// why returns the explanation a refusal error carries.
func why(err error) string {
	var pe *policyError
	var ge *guardError
	switch {
	case errors.As(err, &pe):
		return pe.why
	case errors.As(err, &ge):
		return ge.why
	}
	return ""
}

// connect decides, resolves, vets and dials host:port. It returns the
// decision and a *policyError when the policy refuses, a *guardError when
// every address was refused, or a dial error.
func (e *Egress) connect(ctx context.Context, proxy, rawHost string, port int, commandID string) (net.Conn, netpolicy.Decision, error) {
	c, _, d, err := e.connectVia(ctx, proxy, rawHost, port, commandID, true)
	return c, d, err
}

// connectVia is connect for a tunnel, or for a plain HTTP request
// (tunnel=false), which may leave through an upstream proxy h: then the
// connection is to h, and the request goes to it in absolute form.
func (e *Egress) connectVia(ctx context.Context, proxy, rawHost string, port int, commandID string, tunnel bool) (net.Conn, *hop, netpolicy.Decision, error) {
	if e.Command != "" {
		commandID = e.Command
	}
	var rules *netpolicy.Rules
	if e.Rules != nil {
		rules = e.Rules()
	}
	d := netpolicy.Decide(ctx, rules, rawHost, port, commandID)
	ev := Event{Proxy: proxy, Host: rawHost, Port: port, Stage: "policy", CommandID: commandID}
	if d.Rule != nil {
		ev.Rule = d.Rule.Entry
	}
	if !d.Allow {
		ev.Reason = d.Reason
		w := netpolicy.Explain(rules, d, rawHost, port)
		e.record(ev, w)
		return nil, nil, d, &policyError{w}
	}
	if c, h, ok, err := e.viaUpstream(ctx, d.Host, port, tunnel); ok {
		ev.Allow = true
		e.record(ev, "")
		return c, h, d, err
	}
	var targets []netip.Addr
	if a, err := netip.ParseAddr(d.Host); err == nil {
		targets = []netip.Addr{a} // an IP literal is dialled as decided
	} else {
		addrs, err := e.resolve(ctx, d.Host)
		if err != nil {
			return nil, nil, d, err
		}
		if len(addrs) == 0 {
			return nil, nil, d, fmt.Errorf("%s: no addresses", d.Host)
		}
		g := &netpolicy.Guard{Rules: rules, HostAddrs: e.HostAddrs}
		if e.Listed != nil {
			g.Listed = e.Listed()
		}
		keep, reason := g.Vet(d.Host, port, addrs)
		if len(keep) == 0 {
			ev.Host, ev.Stage, ev.Reason = d.Host, "guard", reason
			w := netpolicy.ExplainGuard(rules, d.Host, port, ev.Rule, reason, addrs)
			e.record(ev, w)
			e.debug("guard refused", "host", d.Host, "addrs", addrs)
			return nil, nil, d, &guardError{reason, w}
		}
		targets = keep
	}
	ev.Allow = true
	e.record(ev, "")
	var err error
	for _, a := range targets {
		var c net.Conn
		if c, err = e.dial(ctx, netip.AddrPortFrom(a, uint16(port))); err == nil {
			return c, nil, d, nil
		}
	}
	return nil, nil, d, err
}

// record reports a decision; why explains a refusal, for the debug log
// (the only place a SOCKS client's refusal can be explained).
func (e *Egress) record(v Event, why string) {
	v.Time = time.Now()
	if !v.Allow {
		v.Why = why
	}
	if e.OnDecision != nil {
		e.OnDecision(v)
	}
	if !v.Allow {
		e.debug("denied", "proxy", v.Proxy, "host", v.Host, "port", v.Port, "reason", v.Reason, "why", why)
	}
}

func (e *Egress) debug(msg string, args ...any) {
	if e.Log != nil {
		e.Log.Debug(msg, args...)
	}
}

func (e *Egress) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	var addrs []netip.Addr
	var err error
	if e.Resolve != nil {
		addrs, err = e.Resolve(ctx, host)
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	// Go's resolver may give an IPv4 answer in its IPv4-mapped form; the
	// guard and its carve-outs judge the IPv4 address it is.
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, err
}

func (e *Egress) dial(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
	if e.Dial != nil {
		return e.Dial(ctx, a)
	}
	d := net.Dialer{Timeout: 30 * time.Second}
	return d.DialContext(ctx, "tcp", a.String())
}

// HTTP is the HTTP proxy. Serve it with Serve.
type HTTP struct {
	*Egress
	// Grace is how long Serve, once its context has ended, lets the
	// requests in progress finish before it closes their connections;
	// 0 closes every connection at once, and so does a context that
	// ended with the cause ErrNoGrace. Tunnels are closed at the end of
	// it either way.
	Grace time.Duration
}

// ErrNoGrace, as the cause a Serve's context ends with
// (context.WithCancelCause), has Serve close every connection at once,
// whatever its Grace.
var ErrNoGrace = errors.New("the proxy stops at once")

// grace is the Grace of a Serve whose context has ended.
func (p *HTTP) grace(ctx context.Context) time.Duration {
	if errors.Is(context.Cause(ctx), ErrNoGrace) {
		return 0
	}
	return p.Grace
}

// Serve accepts connections on l and serves them until ctx ends; then it
// closes l, every connection (tunnels, hijacked or terminated, included:
// see Grace) and every connection opened upstream for them, and returns
// nil once every handler has returned (what is left of net/http's own
// goroutines ends with the closed connections). An error of l's other
// than a temporary one (too many open files: retried after a pause)
// ends it the same way, and is returned.
func (p *HTTP) Serve(ctx context.Context, l net.Listener) error {
	set := newConnSet(ctx)
	if p.Filter != nil {
		err := acceptLoop(ctx, l, set, false, func(ctx context.Context, c net.Conn) { p.filteredConn(ctx, set, c, c, nil, nil) })
		set.shutdown(p.grace(ctx))
		return err
	}
	// hijacked are the connections taken over by a handler, counted the
	// connections that hold a place in conns (released once closed).
	hijacked, counted := map[net.Conn]bool{}, map[net.Conn]bool{}
	budget := conns
	var mu sync.Mutex
	type connKey struct{}
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// A connection taken over is done with once its handler
			// has returned (it closes the connection first).
			defer func() {
				c, _ := r.Context().Value(connKey{}).(net.Conn)
				mu.Lock()
				h, cnt := hijacked[c], counted[c]
				delete(hijacked, c)
				if h {
					delete(counted, c)
				}
				mu.Unlock()
				if h {
					set.remove(c)
					set.wg.Done()
					if cnt {
						budget.release()
					}
				}
			}()
			p.ServeHTTP(w, r)
		}),
		MaxHeaderBytes:    16 << 10,
		ReadHeaderTimeout: 60 * time.Second,
		IdleTimeout:       5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithValue(set.life, lifeKey{}, set.life) },
		ConnContext:       func(ctx context.Context, c net.Conn) context.Context { return context.WithValue(ctx, connKey{}, c) },
		ConnState: func(c net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				set.wg.Add(1)
				set.add(c, false)
				ok := budget.acquire()
				mu.Lock()
				counted[c] = ok
				mu.Unlock()
				if !ok {
					c.Close() // the descriptors left are the process's (reserveFDs)
				}
			case http.StateActive:
				set.busy(c, true)
			case http.StateIdle:
				set.busy(c, false)
			case http.StateHijacked:
				mu.Lock()
				hijacked[c] = true
				mu.Unlock()
			case http.StateClosed:
				set.remove(c)
				set.wg.Done()
				mu.Lock()
				if counted[c] {
					budget.release()
				}
				delete(counted, c)
				mu.Unlock()
			}
		},
		ErrorLog: log.New(debugWriter{p.Egress}, "", 0),
	}
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	err := srv.Serve(l)
	if ctx.Err() != nil {
		err = nil
	}
	set.shutdown(p.grace(ctx))
	srv.Close()
	return err
}

// ServeHTTP handles one proxy request.
func (p *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, ok := p.authorize(r)
	if !ok {
		if r.Method == http.MethodConnect {
			rawReply(w, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"srt\"\r\n\r\n")
			return
		}
		w.Header().Set("Proxy-Authenticate", `Basic realm="srt"`)
		w.WriteHeader(http.StatusProxyAuthRequired)
		return
	}
	commandID, _ := strings.CutPrefix(user, "srt.")
	if commandID == user || len(commandID) > 251 {
		commandID = ""
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r, commandID)
		return
	}
	p.forward(w, r, commandID)
}

// authorize checks Proxy-Authorization: Basic user:token with a non-empty
// user (docs/reference.md#http-proxy) and returns the user.
func (p *HTTP) authorize(r *http.Request) (string, bool) {
	if p.Token == "" {
		return "", true
	}
	h := strings.TrimRight(r.Header.Get("Proxy-Authorization"), " \t")
	scheme, b64, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil {
		return "", false
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok || user == "" || subtle.ConstantTimeCompare([]byte(pass), []byte(p.Token)) != 1 {
		return "", false
	}
	return user, true
}

// rawReply hijacks the connection, writes text and closes it.
func rawReply(w http.ResponseWriter, text string) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	buf.WriteString(text)
	buf.Flush()
	closeWrite(conn)
	conn.Close()
}

// splitHostPort parses a CONNECT target: host:port or [v6]:port, port 1-65535.
func splitHostPort(target string) (string, int, bool) {
	host, portText, err := net.SplitHostPort(target)
	if err != nil || host == "" {
		return "", 0, false
	}
	if strings.Contains(host, ":") && !strings.HasPrefix(target, "[") {
		return "", 0, false
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 || portText[0] == '+' {
		return "", 0, false
	}
	return host, port, true
}

func (p *HTTP) connect(w http.ResponseWriter, r *http.Request, commandID string) {
	host, port, ok := splitHostPort(r.Host)
	if !ok {
		rawReply(w, "HTTP/1.1 400 Bad Request\r\n\r\n")
		return
	}
	ctx := r.Context()
	upstream, d, err := p.Egress.connect(ctx, "connect", host, port, commandID)
	var ge *guardError
	switch {
	case !d.Allow:
		rawReply(w, "HTTP/1.1 403 "+netpolicy.StatusPhrase(d.Reason)+"\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-allowlist\r\n\r\nConnection blocked by network allowlist\n"+why(err))
		return
	case errors.As(err, &ge):
		rawReply(w, "HTTP/1.1 403 "+netpolicy.StatusPhrase(ge.reason)+"\r\nContent-Type: text/plain\r\nX-Proxy-Error: blocked-by-sandbox-runtime\r\n\r\nConnection to "+d.Host+" blocked: "+ge.reason+"\n"+ge.why)
		return
	case err != nil:
		p.debug("dial failed", "host", d.Host, "err", err)
		rawReply(w, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer upstream.Close()
	// From here on the connection is the tunnel's, which lives as long
	// as its Serve lets it.
	ctx, cancel := context.WithCancel(lifeOf(ctx))
	defer cancel()
	defer closeWith(ctx, upstream)()
	client, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer client.Close()
	established := func() error {
		buf.WriteString("HTTP/1.1 200 Connection Established\r\n\r\n")
		return buf.Flush()
	}
	if p.terminate(ctx, "connect", client, buf.Reader, upstream, d.Host, port, commandID, established, func() {
		buf.WriteString(tooManyTunnels)
		buf.Flush()
		closeWrite(client)
	}) {
		return
	}
	if err := established(); err != nil {
		return
	}
	// Bytes the client sent after the CONNECT head are in buf's reader:
	// they go first, then the bare connections (read without a buffer
	// while they wait, pump.go).
	if drain(upstream, buf.Reader) != nil {
		return
	}
	tunnel(client, upstream, p.tunnelIdle())
}

// bufferedConn reads first what the HTTP server had buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// forward proxies one absolute-form request, on a connection of its own.
func (p *HTTP) forward(w http.ResponseWriter, r *http.Request, commandID string) {
	if !r.URL.IsAbs() || r.URL.Host == "" {
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	host := r.URL.Hostname()
	port := 80
	secure := r.URL.Scheme == "https"
	if secure {
		port = 443
	}
	if ps := r.URL.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			http.Error(w, "Bad Request", http.StatusBadRequest)
			return
		}
		port = n
	}
	ctx := r.Context()
	upstream, via, d, err := p.Egress.connectVia(ctx, "http", host, port, commandID, secure)
	var ge *guardError
	switch {
	case !d.Allow:
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Proxy-Error", "blocked-by-allowlist")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "Connection blocked by network allowlist\n"+why(err)+"\n")
		return
	case errors.As(err, &ge):
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Proxy-Error", "blocked-by-sandbox-runtime")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "Connection to "+d.Host+" blocked: "+ge.reason+"\n"+ge.why+"\n")
		return
	case err != nil:
		p.debug("dial failed", "host", d.Host, "err", err)
		http.Error(w, "Bad Gateway", http.StatusBadGateway)
		return
	}
	if secure {
		if upstream, err = p.tlsClient(ctx, upstream, d.Host); err != nil {
			p.debug("tls handshake with the upstream failed", "host", d.Host, "err", err)
			http.Error(w, "Bad Gateway", http.StatusBadGateway)
			return
		}
		via = nil
	}
	uc := newUpConn(ctx, upstream, via, "")
	defer uc.close()
	out := r.Clone(ctx)
	out.RequestURI = ""
	out.URL.Fragment, out.URL.User = "", nil
	rl := &relay{e: p.Egress, host: d.Host, upgrade: upgradeOf(r.Header)}
	if rl.upgrade != "" && !p.Inject.streamable(d.Host) {
		p.Inject.refuseUpgrade(w, d.Host, rl.upgrade)
		return
	}
	outbound(out.Header, rl.upgrade != "")
	// The request goes to the host the policy decided on, and names it:
	// net/http has already dropped the client's Host header, which an
	// absolute-form request overrides (RFC 9112 §3.2.2).
	out.Host = authority(d.Host, port, r.URL.Scheme)
	out.Close = rl.upgrade == ""
	if p.Inject != nil {
		if refused := p.prepare(out, tunnelOf{"http", d.Host, port, commandID}, secure || p.Inject.Plaintext); refused != "" {
			refuseSigV4(w, refused)
			return
		}
	}
	if _, written, err := rl.exchange(w, out, uc); err != nil {
		if written {
			panic(http.ErrAbortHandler)
		}
		p.debug("upstream failed", "host", d.Host, "err", err)
		http.Error(w, "Bad Gateway", http.StatusBadGateway)
	}
}

// authority is the Host header for the canonical host: default port
// elided, IPv6 bracketed.
func authority(host string, port int, scheme string) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if (scheme == "http" && port == 80) || (scheme == "https" && port == 443) {
		return host
	}
	return host + ":" + strconv.Itoa(port)
}

// closeWrite half-closes a connection when it can, else closes it.
func closeWrite(c net.Conn) {
	type closeWriter interface{ CloseWrite() error }
	switch c := c.(type) {
	case closeWriter:
		c.CloseWrite()
	case *bufferedConn:
		closeWrite(c.Conn)
	default:
		c.Close()
	}
}

// debugWriter turns the lines of net/http's server log into debug lines.
type debugWriter struct{ e *Egress }

func (d debugWriter) Write(b []byte) (int, error) {
	d.e.debug("http server", "msg", strings.TrimSpace(string(b)))
	return len(b), nil
}
