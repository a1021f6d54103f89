package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"srt.dev/compiler/policy/netpolicy"
)

// refusedOpaque answers a CONNECT that cannot be terminated.
var refusedOpaque = refuse(http.StatusForbidden, denyOpaqueTunnel, "this proxy does not tunnel CONNECTs it cannot inspect\n")

// filteredConnect serves a CONNECT in filtered mode: the host must be on
// the lists and the tunnel must carry TLS, which is terminated with a
// leaf of the Terminator's CA; the requests inside are filtered like
// plain ones. Any refusal is written raw and the connection closes.
func (p *HTTP) filteredConnect(fc *fconn, req *http.Request) {
	reply := func(text string) {
		fc.bw.WriteString(text)
		fc.bw.Flush()
		closeWrite(fc.c)
	}
	t := p.TLS
	if t == nil {
		reply(refusedOpaque.raw())
		return
	}
	host, port, ok := splitHostPort(req.Host)
	if !ok {
		reply(badRequest("the CONNECT target %q", req.Host).raw())
		return
	}
	d := netpolicy.Decide(fc.ctx, p.rules(), host, port, "")
	switch {
	case d.Host == "":
		reply(badRequest("the host %q is malformed", host).raw())
		return
	case !d.Allow:
		reply(refusedHost.raw())
		return
	}
	if !t.acquire() {
		reply(refuse(http.StatusServiceUnavailable, denyTooManyTunnels, "too many TLS-terminated tunnels at once\n").raw())
		return
	}
	defer t.release()
	deadline := time.Now().Add(t.handshakeTimeout())
	ctx, cancel := context.WithDeadline(fc.ctx, deadline)
	defer cancel()
	upstream, _, err := p.Egress.connect(ctx, "connect", host, port, "")
	var ge *guardError
	switch {
	case errors.As(err, &ge):
		reply(refuse(http.StatusForbidden, denyAddressNotAllowed, "Connection to "+d.Host+" blocked: "+ge.reason+"\n").raw())
		return
	case err != nil:
		p.debug("dial failed", "host", d.Host, "err", err)
		reply("HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	tt := &tunnelTarget{host: d.Host, port: port}
	tt.first.Store(&upstream)
	defer func() {
		if up := tt.first.Swap(nil); up != nil {
			(*up).Close()
		}
	}()
	fc.bw.WriteString("HTTP/1.1 200 Connection Established\r\n\r\n")
	if fc.bw.Flush() != nil {
		return
	}
	fc.c.SetDeadline(deadline)
	if head, _ := fc.br.Peek(3); !isClientHello(head) {
		p.debug("opaque tunnel refused", "host", d.Host)
		return
	}
	conn := &bufferedConn{Conn: fc.c, r: fc.br}
	tc := tls.Server(conn, &tls.Config{
		NextProtos: []string{"http/1.1"},
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if hello.ServerName == "" {
				return t.Leaf(d.Host)
			}
			sni, err := canonicalSNI(hello.ServerName)
			if err != nil {
				p.debug("tls refused", "host", d.Host, "sni", hello.ServerName)
				return nil, err
			}
			tt.sni = hello.ServerName
			if sni != d.Host {
				// The client gets a certificate for the name it asked
				// for, and every request of the tunnel a 421: nothing
				// reaches the CONNECT host.
				tt.misdirected = true
				p.debug("tls server name differs from the CONNECT host", "host", d.Host, "sni", hello.ServerName)
			}
			return t.Leaf(sni)
		},
	})
	if err := tc.HandshakeContext(ctx); err != nil {
		p.debug("tls handshake with the client failed", "host", d.Host, "err", err)
		return
	}
	fc.c.SetDeadline(time.Time{})
	p.filteredConn(fc.ctx, fc.set, fc.raw, tc, nil, tt)
}

// canonicalSNI is a TLS server name in the canonical form of hosts.
func canonicalSNI(name string) (string, error) {
	if strings.ContainsAny(name, ":%") {
		return "", errSNIMismatch
	}
	d := netpolicy.Decide(context.Background(), &netpolicy.Rules{}, name, 443, "")
	if d.Host == "" {
		return "", errSNIMismatch
	}
	return d.Host, nil
}

var _ net.Conn = (*bufferedConn)(nil)
