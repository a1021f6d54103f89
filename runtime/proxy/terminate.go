package proxy

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"srt.dev/compiler/policy"
)

// A CA signs the leaf certificates of terminated tunnels. Its key stays in
// this process's memory.
type CA struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// PEM is the certificate, for the command's trust bundle.
	PEM []byte
}

// NewCA makes an ephemeral CA: an ECDSA P-256 key (fast to generate and to
// sign with) and a self-signed certificate valid from an hour ago for 30
// days, constrained to sign leaves only.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{CommonName: "srt ephemeral CA " + now.UTC().Format(time.RFC3339), Organization: []string{"srt sandbox"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// LoadCA reads a CA from PEM: the first CERTIFICATE block of certPEM and
// the private key of keyPEM (PKCS#8, PKCS#1 or SEC 1), which must belong to
// the certificate.
func LoadCA(certPEM, keyPEM []byte) (*CA, error) {
	var certDER []byte
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			certDER = b.Bytes
			break
		}
	}
	if certDER == nil {
		return nil, errors.New("the certificate file holds no PEM CERTIFICATE block")
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, fmt.Errorf("the certificate does not parse: %w", err)
	}
	if !cert.IsCA {
		return nil, errors.New("the certificate is not a CA certificate (basicConstraints CA:TRUE is missing)")
	}
	pair, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER}), keyPEM)
	if err != nil {
		return nil, fmt.Errorf("the key does not belong to the certificate, or is not a PEM private key: %w", err)
	}
	signer, ok := pair.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("the key cannot sign")
	}
	return &CA{Cert: cert, Key: signer, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})}, nil
}

func randomSerial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n.Add(n, big.NewInt(1))
}

// Defaults of network.tlsTerminate.
const (
	DefaultMaxTunnels       = 256
	DefaultHandshakeTimeout = 10 * time.Second
	leafCacheSize           = 256
)

// A Terminator terminates the TLS of allowed tunnels: it answers the
// command's ClientHello with a leaf certificate for the name it asked for,
// signed by the run's CA, reads the HTTP requests inside, and forwards them
// over its own TLS connection to the real server, verified against Roots.
type Terminator struct {
	CA *CA
	// Roots verify every upstream server the proxies speak TLS to: a
	// terminated tunnel's, an https:// request's in absolute form, and
	// filtered mode's (the system roots plus extras; nil means the
	// system's).
	Roots *x509.CertPool
	// Exclude lists the hosts tunnelled opaquely; it is called once per
	// tunnel, so a new list applies to the next one.
	Exclude func() policy.HostList
	// MaxTunnels bounds the terminated tunnels open at once; 0 means 256.
	MaxTunnels func() int
	// HandshakeTimeout runs from the CONNECT to the end of the TLS
	// handshake; 0 means 10 s.
	HandshakeTimeout func() time.Duration

	once    sync.Once
	leafKey *ecdsa.PrivateKey
	keyErr  error
	mu      sync.Mutex
	leaves  map[string]*tls.Certificate
	order   []string // oldest first, for eviction
	active  atomic.Int64
}

func (t *Terminator) excluded(host string) bool {
	if t.Exclude == nil {
		return false
	}
	_, ok := t.Exclude().Match(host, 0)
	return ok
}

func (t *Terminator) acquire() bool {
	limit := DefaultMaxTunnels
	if t.MaxTunnels != nil && t.MaxTunnels() > 0 {
		limit = t.MaxTunnels()
	}
	if t.active.Add(1) > int64(limit) {
		t.active.Add(-1)
		return false
	}
	return true
}

func (t *Terminator) release() { t.active.Add(-1) }

func (t *Terminator) handshakeTimeout() time.Duration {
	if t.HandshakeTimeout != nil && t.HandshakeTimeout() > 0 {
		return t.HandshakeTimeout()
	}
	return DefaultHandshakeTimeout
}

// Leaf returns the certificate for name (a DNS name or an IP literal),
// minting it on first use. Every leaf shares one ECDSA P-256 key made once
// per Terminator: a new name costs one signature, not a key generation.
func (t *Terminator) Leaf(name string) (*tls.Certificate, error) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	t.mu.Lock()
	c := t.leaves[name]
	t.mu.Unlock()
	if c != nil && time.Until(c.Leaf.NotAfter) > time.Hour {
		return c, nil
	}
	t.once.Do(func() { t.leafKey, t.keyErr = ecdsa.GenerateKey(elliptic.P256(), rand.Reader) })
	if t.keyErr != nil {
		return nil, t.keyErr
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if tmpl.NotAfter.After(t.CA.Cert.NotAfter) {
		tmpl.NotAfter = t.CA.Cert.NotAfter
	}
	if a, err := netip.ParseAddr(name); err == nil {
		tmpl.IPAddresses = []net.IP{a.AsSlice()}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, t.CA.Cert, t.leafKey.Public(), t.CA.Key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c = &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: t.leafKey, Leaf: leaf}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.leaves == nil {
		t.leaves = map[string]*tls.Certificate{}
	}
	if _, ok := t.leaves[name]; !ok {
		t.order = append(t.order, name)
		if len(t.order) > leafCacheSize {
			delete(t.leaves, t.order[0])
			t.order = t.order[1:]
		}
	}
	t.leaves[name] = c
	return c, nil
}

// isClientHello reports whether b (at least 3 bytes) begins a TLS
// handshake record of TLS 1.0-1.3 (record version 3.0-3.3).
func isClientHello(b []byte) bool {
	return len(b) >= 3 && b[0] == 0x16 && b[1] == 0x03 && b[2] <= 0x03
}

// tooManyTunnels answers a CONNECT over the cap of terminated tunnels.
const tooManyTunnels = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nX-Proxy-Error: too-many-tunnels\r\n\r\ntoo many TLS-terminated tunnels at once"

// errSNIMismatch refuses a ClientHello whose server name is not the host
// the tunnel was allowed for.
var errSNIMismatch = errors.New("the TLS server name does not match the CONNECT host")

// terminate takes over an allowed tunnel to host:port (canonical, as the
// policy decided it) of proxy ("connect" or "socks") when termination
// applies to host: it reserves a tunnel (or refuses with over), sends ok,
// and serves the connection until it ends, or ctx does. It returns false,
// having done nothing, when the host is excluded.
func (e *Egress) terminate(ctx context.Context, proxy string, client net.Conn, pending *bufio.Reader, upstream net.Conn, host string, port int, commandID string, ok func() error, over func()) bool {
	t := e.TLS
	if t == nil || t.excluded(host) {
		return false
	}
	if !t.acquire() {
		over()
		return true
	}
	released := false
	release := func() {
		if !released {
			released = true
			t.release()
		}
	}
	defer release()
	if ok() != nil {
		return true
	}
	deadline := time.Now().Add(t.handshakeTimeout())
	client.SetDeadline(deadline)
	if pending == nil {
		pending = bufio.NewReader(client)
	}
	// A TLS client speaks first. Whichever side speaks first decides: a
	// server that greets (SSH, SMTP) makes the tunnel opaque at once.
	upBuf := bufio.NewReader(upstream)
	upSpoke := make(chan struct{})
	go func() {
		upBuf.Peek(1)
		close(upSpoke)
	}()
	clientSpoke := make(chan []byte, 1)
	go func() {
		head, _ := pending.Peek(3)
		clientSpoke <- head
	}()
	var head []byte
	select {
	case head = <-clientSpoke:
		upstream.SetReadDeadline(time.Now())
		<-upSpoke
		upstream.SetReadDeadline(time.Time{})
	case <-upSpoke:
		client.SetReadDeadline(time.Now())
		<-clientSpoke
		head = nil
	}
	client.SetDeadline(deadline)
	if !isClientHello(head) {
		// Not TLS: an opaque tunnel, which the cap does not count. What
		// either side said first goes over, then the bare connections.
		release()
		client.SetDeadline(time.Time{})
		if drain(upstream, pending) != nil || drain(client, upBuf) != nil {
			return true
		}
		tunnel(client, upstream, e.tunnelIdle())
		return true
	}
	hctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	// The upstream handshake runs while the command's does.
	type result struct {
		c   *tls.Conn
		err error
	}
	up := make(chan result, 1)
	go func() {
		uc := tls.Client(&bufferedConn{Conn: upstream, r: upBuf}, e.upstreamTLS(host))
		up <- result{uc, uc.HandshakeContext(hctx)}
	}()
	tc := tls.Server(&bufferedConn{Conn: client, r: pending}, &tls.Config{
		NextProtos: []string{"http/1.1"},
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if hello.ServerName != "" && !strings.EqualFold(strings.TrimSuffix(hello.ServerName, "."), host) {
				e.debug("tls refused", "host", host, "sni", hello.ServerName)
				return nil, errSNIMismatch
			}
			return t.Leaf(host)
		},
	})
	if err := tc.HandshakeContext(hctx); err != nil {
		e.debug("tls handshake with the command failed", "host", host, "err", err)
		upstream.Close()
		<-up
		return true
	}
	client.SetDeadline(time.Time{})
	u := <-up
	if u.err != nil {
		e.debug("tls handshake with the upstream failed", "host", host, "err", u.err)
	}
	e.serveTerminated(ctx, tc, u.c, u.err, tunnelOf{proxy, host, port, commandID})
	return true
}

// serveTerminated reads HTTP/1.1 requests from the command's side of a
// terminated tunnel and forwards them. The first request goes over the
// connection made at CONNECT time; the connection is kept for the next
// one, and when the upstream has closed it, the next is dialled through
// the policy again. It returns when the command's side closes (or idles
// out), or ctx ends, with every request's handler done.
func (e *Egress) serveTerminated(ctx context.Context, client *tls.Conn, first *tls.Conn, firstErr error, to tunnelOf) {
	if firstErr != nil && first != nil {
		first.Close()
		first = nil
	}
	h := &terminated{e: e, tunnelOf: to, life: ctx, firstErr: firstErr}
	if first != nil {
		h.slot.put(newUpConn(ctx, first, nil, terminatedKey))
	}
	defer h.slot.close()
	l := newOneConnListener(client)
	var handlers sync.WaitGroup
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			handlers.Add(1)
			defer handlers.Done()
			h.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       6 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed || s == http.StateHijacked {
				l.close()
			}
		},
		ErrorLog: log.New(debugWriter{e}, "", 0),
	}
	stop := closeWith(ctx, client)
	defer stop()
	srv.Serve(l)
	// A protocol switch leaves its handler running a tunnel on the
	// connection after the server has let go of it.
	handlers.Wait()
}

// tunnelOf is what a terminated tunnel was opened for.
type tunnelOf struct {
	proxy     string // "connect" or "socks"
	host      string // canonical: the name the policy decided on
	port      int
	commandID string
}

// terminated forwards the requests of one terminated tunnel. Its
// requests come one at a time (HTTP/1.1 on one connection): the slot
// needs no lock.
type terminated struct {
	tunnelOf
	e    *Egress
	life context.Context // the tunnel's: upstream connections close with it
	slot upSlot
	// firstErr is why the connection made at CONNECT time failed its
	// handshake: the first request's answer.
	firstErr error
	used     bool
}

// terminatedKey names the upstream of every request of a tunnel.
const terminatedKey = "tunnel"

func (h *terminated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// r.Host is the authority of an absolute-form target, else the Host
	// header (net/http drops the Host header of an absolute-form
	// request, which is then not forwarded either).
	if named, port, ok := h.names(r.Host); !ok {
		h.misdirected(w, r.Host, named, port)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Scheme = "https"
	out.URL.Host = authority(h.host, h.port, "https")
	out.Host = out.URL.Host
	rl := &relay{e: h.e, host: h.host, keepAlive: "timeout=5", upgrade: upgradeOf(r.Header)}
	if rl.upgrade != "" && !h.e.Inject.streamable(h.host) {
		h.e.Inject.refuseUpgrade(w, h.host, rl.upgrade)
		return
	}
	outbound(out.Header, rl.upgrade != "")
	if r.ContentLength == 0 {
		out.Body = nil
	}
	if refused := h.e.prepare(out, h.tunnelOf, true); refused != "" {
		refuseSigV4(w, refused)
		return
	}
	for attempt := 0; ; attempt++ {
		uc, err := h.upstream(r.Context())
		if err != nil {
			h.e.debug("terminated request failed", "host", h.host, "err", err)
			h.unreachable(w, err)
			return
		}
		reusable, written, err := rl.exchange(w, out, uc)
		switch {
		case err == nil && reusable:
			h.slot.put(uc)
			return
		case err == nil:
			uc.close()
			return
		case written:
			uc.close()
			panic(http.ErrAbortHandler)
		}
		uc.close()
		if attempt > 0 || !retryable(out, uc) {
			h.e.debug("terminated request failed", "host", h.host, "err", err)
			h.unreachable(w, err)
			return
		}
		// The upstream closed the kept connection as the request went:
		// once more on a new one.
	}
}

// unreachable answers a request that found no upstream.
func (h *terminated) unreachable(w http.ResponseWriter, err error) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "srt could not reach %s over TLS: %v\n", h.host, err)
}

// upstream returns the connection for the next request: the one kept
// from the last, else (after the first) a new one, dialled through the
// policy.
func (h *terminated) upstream(ctx context.Context) (*upConn, error) {
	if uc := h.slot.take(terminatedKey); uc != nil {
		h.used = true
		return uc, nil
	}
	if !h.used {
		h.used = true
		if h.firstErr != nil {
			return nil, h.firstErr
		}
	}
	raw, d, err := h.e.connect(ctx, "connect", h.host, h.port, h.commandID)
	if err != nil {
		return nil, err
	}
	if !d.Allow {
		raw.Close()
		return nil, fmt.Errorf("%s: %s", h.host, d.Reason)
	}
	tc, err := h.e.tlsClient(ctx, raw, h.host)
	if err != nil {
		return nil, err
	}
	return newUpConn(h.life, tc, nil, terminatedKey), nil
}

// names reports whether the authority a request names (host[:port], port
// 443 by default) is the tunnel's host and port, compared in canonical
// form. It returns the host and port named, canonical when they parse.
// An HTTP/1.0 request without a Host header names the tunnel's host.
func (h *terminated) names(auth string) (string, int, bool) {
	if auth == "" {
		return h.host, h.port, true
	}
	host, port, r := authorityOf(auth, 443)
	if r != nil {
		return "", 0, false
	}
	return host, port, host == h.host && port == h.port
}

// misdirected answers a request that names another host than its
// tunnel's (RFC 9110 §15.5.20): it is forwarded nowhere, and the refusal
// is a violation. The request could otherwise reach another tenant of a
// shared front (a CDN, virtual hosts) with a credential meant for the
// tunnel's host, or a host the policy never allowed.
func (h *terminated) misdirected(w http.ResponseWriter, raw, named string, port int) {
	ev := Event{Proxy: h.proxy, Host: named, Port: port, Stage: "host", CommandID: h.commandID,
		Reason: fmt.Sprintf("the request names another host than its TLS tunnel to %s", authority(h.host, h.port, "https"))}
	if named == "" {
		ev.Host, ev.Port = h.host, h.port
		ev.Reason = "the request inside the TLS tunnel names a malformed host"
	}
	if h.e.Command != "" {
		ev.CommandID = h.e.Command
	}
	h.e.record(ev, "")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Proxy-Error", "misdirected-request")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusMisdirectedRequest)
	fmt.Fprintf(w, "srt did not forward this request: it names %q, but its TLS tunnel is to %s; open a connection to that host instead\n", raw, authority(h.host, h.port, "https"))
}

// oneConnListener hands out one connection, then waits for it to close.
type oneConnListener struct {
	c    chan net.Conn
	done chan struct{}
	once sync.Once
	addr net.Addr
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{c: make(chan net.Conn, 1), done: make(chan struct{}), addr: c.LocalAddr()}
	l.c <- c
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.c:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *oneConnListener) close()         { l.once.Do(func() { close(l.done) }) }
func (l *oneConnListener) Close() error   { l.close(); return nil }
func (l *oneConnListener) Addr() net.Addr { return l.addr }
