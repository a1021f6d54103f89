package proxy

import (
	"bufio"
	"context"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
)

// SOCKS is the SOCKS5 proxy: CONNECT only (RFC 1928), user/password
// authentication with the proxy token (RFC 1929), and the reference's
// answers (docs/reference.md#socks5). It is written here rather than on
// armon/go-socks5, which resolves a name before any rule sees it (a DNS
// leak for denied names) and cannot answer a guard refusal with 0x02.
type SOCKS struct {
	*Egress
}

// SOCKS5 reply codes.
const (
	socksSucceeded   = 0x00
	socksGeneral     = 0x01
	socksNotAllowed  = 0x02
	socksUnreachable = 0x04
	socksCmdNotSupp  = 0x07
)

// Serve accepts connections on l and serves them until ctx ends; then it
// closes l and every connection (and the tunnels they carry), and
// returns nil once every goroutine it started has. An error of l's other
// than a temporary one (too many open files: retried after a pause) ends
// it the same way, and is returned.
func (p *SOCKS) Serve(ctx context.Context, l net.Listener) error {
	set := newConnSet(ctx)
	err := acceptLoop(ctx, l, set, true, p.handle)
	set.shutdown(0)
	return err
}

// handle serves one client connection; ctx ends when the connection's
// Serve shuts down.
func (p *SOCKS) handle(ctx context.Context, c net.Conn) {
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Greeting: 05 N methods...
	head := make([]byte, 2)
	if _, err := io.ReadFull(br, head); err != nil || head[0] != 0x05 {
		return // not SOCKS5: drop silently
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	authed, commandID := false, ""
	offersUserPass := false
	for _, m := range methods {
		offersUserPass = offersUserPass || m == 0x02
	}
	switch {
	case p.Token == "":
		authed = true
		c.Write([]byte{0x05, 0x00})
	case offersUserPass:
		c.Write([]byte{0x05, 0x02})
		user, pass, ok := readUserPass(br)
		if !ok {
			return
		}
		if !(user == "srt" || strings.HasPrefix(user, "srt.")) || subtle.ConstantTimeCompare([]byte(pass), []byte(p.Token)) != 1 {
			c.Write([]byte{0x01, 0x01})
			return
		}
		c.Write([]byte{0x01, 0x00})
		authed = true
		if id := strings.TrimPrefix(user, "srt."); id != user && len(id) <= 251 {
			commandID = id
		}
	default:
		// A client that cannot authenticate (BSD nc -X 5): pretend, read
		// its request, and never dial (docs/reference.md#socks5).
		c.Write([]byte{0x05, 0x00})
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
	}
	host, port, ok := p.readRequest(br, c)
	if !ok {
		return
	}
	c.SetReadDeadline(time.Time{})
	if !authed {
		p.unauthenticated(c, host, port)
		return
	}
	upstream, d, err := p.Egress.connect(ctx, "socks", host, port, commandID)
	var ge *guardError
	switch {
	case !d.Allow, errors.As(err, &ge):
		reply(c, socksNotAllowed)
		return
	case err != nil:
		reply(c, socksUnreachable)
		return
	}
	defer upstream.Close()
	defer closeWith(ctx, upstream)()
	if p.terminate(ctx, "socks", c, br, upstream, d.Host, port, commandID, func() error { return reply(c, socksSucceeded) }, func() { reply(c, socksGeneral) }) {
		return
	}
	if reply(c, socksSucceeded) != nil {
		return
	}
	// What the client sent after its request goes first, then the bare
	// connections.
	if drain(upstream, br) != nil {
		return
	}
	tunnel(c, upstream, p.tunnelIdle())
}

// reply sends a reply with BND.ADDR 0.0.0.0:0.
func reply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0})
	return err
}

// readUserPass reads an RFC 1929 sub-negotiation (the version byte is not
// checked, as in the reference).
func readUserPass(br *bufio.Reader) (user, pass string, ok bool) {
	b := make([]byte, 2)
	if _, err := io.ReadFull(br, b); err != nil {
		return "", "", false
	}
	u := make([]byte, b[1])
	if _, err := io.ReadFull(br, u); err != nil {
		return "", "", false
	}
	n, err := br.ReadByte()
	if err != nil {
		return "", "", false
	}
	pw := make([]byte, n)
	if _, err := io.ReadFull(br, pw); err != nil {
		return "", "", false
	}
	return string(u), string(pw), true
}

// readRequest reads a CONNECT request; BIND and UDP ASSOCIATE get 05 07,
// anything else is dropped silently.
func (p *SOCKS) readRequest(br *bufio.Reader, c net.Conn) (string, int, bool) {
	h := make([]byte, 4)
	if _, err := io.ReadFull(br, h); err != nil || h[0] != 0x05 {
		return "", 0, false
	}
	switch h[1] {
	case 0x01:
	case 0x02, 0x03:
		c.Write([]byte{0x05, socksCmdNotSupp})
		return "", 0, false
	default:
		return "", 0, false
	}
	var host string
	switch h[3] {
	case 0x01:
		a := make([]byte, 4)
		if _, err := io.ReadFull(br, a); err != nil {
			return "", 0, false
		}
		host = netip.AddrFrom4([4]byte(a)).String()
	case 0x04:
		a := make([]byte, 16)
		if _, err := io.ReadFull(br, a); err != nil {
			return "", 0, false
		}
		host = netip.AddrFrom16([16]byte(a)).String()
	case 0x03:
		n, err := br.ReadByte()
		if err != nil {
			return "", 0, false
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return "", 0, false
		}
		host = string(name)
	default:
		return "", 0, false
	}
	pb := make([]byte, 2)
	if _, err := io.ReadFull(br, pb); err != nil {
		return "", 0, false
	}
	return host, int(binary.BigEndian.Uint16(pb)), true
}

// unauthenticated answers a client that offered no authentication: on
// port 22 an SSH disconnect naming the reason, so that ssh shows it;
// anything else is refused. Nothing is ever dialled.
func (p *SOCKS) unauthenticated(c net.Conn, host string, port int) {
	canon, err := policy.CanonicalHost(host)
	var rules *netpolicy.Rules
	if p.Rules != nil {
		rules = p.Rules()
	}
	reason := "srt: this proxy requires authentication; use the proxy settings srt provides"
	if err == nil && rules != nil {
		if rule, ok := rules.Denied.Match(canon, port); ok {
			d := netpolicy.Decision{Host: canon, Cause: netpolicy.CauseDenyList, Reason: netpolicy.CauseDenyList.Text(), Rule: &rule}
			p.record(Event{Proxy: "socks", Host: host, Port: port, Reason: d.Reason, Rule: rule.Entry, Stage: "policy", CommandID: p.Command}, netpolicy.Explain(rules, d, host, port))
			if text := rules.DeniedReasons[rule.Entry]; text != "" {
				reason = text
			}
		}
	}
	if err != nil || port != 22 {
		reply(c, socksNotAllowed)
		return
	}
	reply(c, socksSucceeded)
	c.Write([]byte("SSH-2.0-policy_refusal\r\n"))
	c.Write(sshDisconnect(reason))
}

// sshDisconnect is a plaintext SSH_MSG_DISCONNECT packet (RFC 4253 §6,
// §11.1) with reason code 1 and the description.
func sshDisconnect(description string) []byte {
	description = netpolicy.SanitizeReason(description, 0)
	if r := []rune(description); len(r) > 1000 {
		description = string(r[:1000])
	}
	var payload []byte
	payload = append(payload, 1) // SSH_MSG_DISCONNECT
	payload = binary.BigEndian.AppendUint32(payload, 1)
	payload = binary.BigEndian.AppendUint32(payload, uint32(len(description)))
	payload = append(payload, description...)
	payload = binary.BigEndian.AppendUint32(payload, 0) // language tag
	padding := 8 - (5+len(payload))%8
	if padding < 4 {
		padding += 8
	}
	var pkt []byte
	pkt = binary.BigEndian.AppendUint32(pkt, uint32(1+len(payload)+padding))
	pkt = append(pkt, byte(padding))
	pkt = append(pkt, payload...)
	pkt = append(pkt, make([]byte, padding)...)
	return pkt
}
