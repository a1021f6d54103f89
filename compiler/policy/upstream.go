package policy

import (
	"net/netip"
	"strings"
)

// Match reports whether a canonical host (CanonicalHost) is one of the
// mitmProxy domains: "*.base" matches names below base (never an IP
// address), any other entry the host itself, case-insensitively, an IP
// address in any spelling of the same address (ParseHostPattern wrote it
// canonically).
func (m *MitmProxy) Match(host string) bool {
	_, ok := m.Domains.Match(host, 0)
	return ok
}

// NoProxy is a NO_PROXY list (network.parentProxy.noProxy, or the
// NO_PROXY variable): comma-separated entries, each "*" (every
// destination), an IP address, a CIDR range, or a domain, which matches
// itself and every name below it, with or without a leading "." or "*.".
// Ports in entries are ignored.
type NoProxy struct {
	Text     string
	all      bool
	prefixes []netip.Prefix
	domains  []string // lower case, without a leading dot
}

// ParseNoProxy reads a NO_PROXY value; entries it cannot read are skipped.
func ParseNoProxy(s string) NoProxy {
	n := NoProxy{Text: s}
	for _, e := range strings.Split(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			continue
		case e == "*":
			n.all = true
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			n.prefixes = append(n.prefixes, p.Masked())
			continue
		}
		host := e
		if h, ok := cutPort(e); ok {
			host = h
		}
		host = strings.Trim(host, "[]")
		if a, err := netip.ParseAddr(host); err == nil {
			a = a.WithZone("").Unmap()
			n.prefixes = append(n.prefixes, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		host = strings.TrimPrefix(strings.TrimPrefix(host, "*"), ".")
		host = strings.TrimSuffix(host, ".")
		if host != "" {
			n.domains = append(n.domains, host)
		}
	}
	return n
}

// Match reports whether a canonical host goes direct.
func (n NoProxy) Match(host string) bool {
	if n.all {
		return true
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap()
		for _, p := range n.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	host = strings.ToLower(host)
	for _, d := range n.domains {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return false
}

// IsLoopbackHost reports whether a canonical host is a loopback address or
// a localhost name: those never go to a parent proxy.
func IsLoopbackHost(host string) bool {
	h := strings.ToLower(host)
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// cutPort returns the host of "host:port" or "[v6]:port" (the port all
// digits), and false for anything else.
func cutPort(e string) (string, bool) {
	var host, port string
	if rest, ok := strings.CutPrefix(e, "["); ok {
		h, after, ok := strings.Cut(rest, "]")
		if !ok || !strings.HasPrefix(after, ":") {
			return "", false
		}
		host, port = h, after[1:]
	} else {
		h, p, ok := strings.Cut(e, ":")
		if !ok || strings.Contains(p, ":") {
			return "", false
		}
		host, port = h, p
	}
	if port == "" || strings.Trim(port, "0123456789") != "" {
		return "", false
	}
	return host, true
}
