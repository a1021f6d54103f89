package netpolicy

import (
	"net/netip"
	"strings"

	"srt.dev/compiler/policy"
)

// Address classes the guard refuses, in the order reasons list them.
const (
	classDenyListed  = "a deny-listed address"
	classLoopback    = "a loopback address"
	classUnspecified = "an unspecified address"
	classLinkLocal   = "a link-local address"
	classMulticast   = "a multicast address"
	classBroadcast   = "the broadcast address"
	classMetadata    = "a cloud metadata address"
	classListed      = "a listed address"
	classHost        = "one of this host's addresses"
	classNonLoopback = "a non-loopback address"
)

var classOrder = []string{classDenyListed, classLoopback, classUnspecified, classLinkLocal, classMulticast, classBroadcast, classMetadata, classListed, classHost, classNonLoopback}

func prefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(s))
	for i, p := range s {
		out[i] = netip.MustParsePrefix(p)
	}
	return out
}

// The fixed classes of the resolved-address guard (docs/reference.md#resolved-address-guard).
var fixed = []struct {
	class    string
	prefixes []netip.Prefix
}{
	{classLoopback, prefixes("127.0.0.0/8", "::1/128")},
	{classUnspecified, prefixes("0.0.0.0/8", "::/128")},
	{classLinkLocal, prefixes("169.254.0.0/16", "fe80::/10")},
	{classMulticast, prefixes("224.0.0.0/4", "ff00::/8")},
	{classBroadcast, prefixes("255.255.255.255/32")},
	{classMetadata, prefixes("100.100.100.200/32", "168.63.129.16/32", "192.0.0.192/32",
		"fd00:ec2::/32", "fd20:ce::254/128", "fd00:c1::a9fe:a9fe/128", "fd00:42::42/128",
		"fd00:a9fe:a9fe::1/128", "fd00:100::100:200/128")},
}

// Guard vets the addresses an allowed name resolved to (docs/reference.md#resolved-address-guard).
type Guard struct {
	Rules *Rules
	// Listed is network.deniedResolvedAddresses.
	Listed []netip.Prefix
	// HostAddrs returns the addresses of this host's interfaces now; nil
	// means none are known.
	HostAddrs func() []netip.Addr
}

// Vet returns the addresses that may be dialled for host (canonical) on
// port, in the order given, and when none survives, the reason: "resolved
// to " and the classes of the refused addresses. IP literals are never
// vetted: the caller dials them as decided.
func (g *Guard) Vet(host string, port int, addrs []netip.Addr) (keep []netip.Addr, reason string) {
	classes := map[string]bool{}
	var hostAddrs []netip.Addr
	if g.HostAddrs != nil {
		hostAddrs = g.HostAddrs()
	}
	local := host == "localhost" || strings.HasSuffix(host, ".localhost")
	for _, a := range addrs {
		if c := g.class(a, port, local, hostAddrs); c != "" {
			classes[c] = true
			continue
		}
		keep = append(keep, a)
	}
	if len(keep) > 0 || len(classes) == 0 {
		return keep, ""
	}
	var names []string
	for _, c := range classOrder {
		if classes[c] {
			names = append(names, c)
		}
	}
	return nil, "resolved to " + strings.Join(names, " / ")
}

// class returns why a is refused, or "".
func (g *Guard) class(a netip.Addr, port int, local bool, hostAddrs []netip.Addr) string {
	a = a.WithZone("")
	forms := []netip.Addr{a}
	if v4, ok := embeddedIPv4(a); ok {
		forms = append(forms, v4)
	}
	// 1. An IP literal on the deny list (with its port).
	if g.Rules != nil {
		for _, f := range forms {
			if isLiteralRule(g.Rules.Denied, f.String(), port) {
				return classDenyListed
			}
		}
		// 2. The exact address allow-listed as a literal: carved out.
		if isLiteralRule(g.Rules.Allowed, a.String(), port) {
			return ""
		}
	}
	// 3. localhost names may resolve only to loopback.
	if local {
		if a.IsLoopback() || (len(forms) > 1 && forms[1].IsLoopback()) {
			return ""
		}
		return classNonLoopback
	}
	// 4. The fixed classes, then the listed ranges.
	for _, fc := range fixed {
		for _, f := range forms {
			for _, p := range fc.prefixes {
				if p.Contains(f) {
					return fc.class
				}
			}
		}
	}
	for _, f := range forms {
		for _, p := range g.Listed {
			if p.Contains(f) {
				return classListed
			}
		}
	}
	// 5. This host's own addresses.
	for _, h := range hostAddrs {
		for _, f := range forms {
			if h.WithZone("") == f {
				return classHost
			}
		}
	}
	return ""
}

// isLiteralRule reports whether an IP-literal entry of l names addr on
// port (a wildcard or a name never does).
func isLiteralRule(l policy.HostList, addr string, port int) bool {
	for _, r := range l {
		if r.Host == addr && (r.Port == 0 || r.Port == port) {
			if _, err := netip.ParseAddr(r.Host); err == nil {
				return true
			}
		}
	}
	return false
}

// embeddedIPv4 extracts the IPv4 address an IPv6 address carries:
// IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, IPv4-translated
// ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96 and 6to4 2002:AABB:CCDD::/16.
func embeddedIPv4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	zero := func(from, to int) bool {
		for _, x := range b[from:to] {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case a.Is4In6():
		return a.Unmap(), true
	case zero(0, 12) && !zero(12, 16) && a != netip.IPv6Loopback():
		return v4(12), true // IPv4-compatible (deprecated)
	case zero(0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0:
		return v4(12), true // IPv4-translated
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12):
		return v4(12), true // NAT64 well-known prefix
	case b[0] == 0x20 && b[1] == 0x02:
		return v4(2), true // 6to4
	}
	return netip.Addr{}, false
}
