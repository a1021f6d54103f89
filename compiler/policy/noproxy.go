package policy

import "strings"

// ReferenceNoProxy is the reference's NO_PROXY for the command on Linux
// and macOS: the loopback names and addresses, link-local and the
// private IPv4 ranges.
const ReferenceNoProxy = "localhost,127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"

// OpenLoopbackNoProxy is the command's no_proxy on Windows when loopback
// is open (network.allowLocalBinding).
const OpenLoopbackNoProxy = "localhost,127.0.0.1,::1"

// A NoProxyOmission is an entry CommandNoProxy left out of NO_PROXY, and
// the first allow rule that names a destination it would exempt.
type NoProxyOmission struct {
	Entry string
	Rule  HostRule
}

// CommandNoProxy is the NO_PROXY the command gets: the entries of base
// (a NO_PROXY list) that exempt no destination a rule of allowed names.
// A destination the policy allows is reached through srt's proxy, which
// dials it from the host; a client that NO_PROXY sends there directly
// reaches the sandbox's own loopback (Linux), or nothing the sandbox lets
// it reach (macOS). So "localhost:9443" in allowedDomains leaves localhost
// out, "[::1]" leaves ::1 out, and "10.1.2.3" leaves 10.0.0.0/8 out.
// The command's own servers stay reachable directly at the names and
// addresses that remain (127.0.0.1 when only localhost is allowed).
func CommandNoProxy(base string, allowed ...HostList) (string, []NoProxyOmission) {
	var keep []string
	var left []NoProxyOmission
	for _, e := range strings.Split(base, ",") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		n := ParseNoProxy(e)
		if r, ok := firstExempted(n, allowed); ok {
			left = append(left, NoProxyOmission{Entry: e, Rule: r})
			continue
		}
		keep = append(keep, e)
	}
	return strings.Join(keep, ","), left
}

func firstExempted(n NoProxy, lists []HostList) (HostRule, bool) {
	for _, l := range lists {
		for _, r := range l {
			if n.Exempts(r) {
				return r, true
			}
		}
	}
	return HostRule{}, false
}

// Exempts reports whether n sends directly some destination the allow
// rule r matches: an address r names inside one of n's ranges, a name r
// names at or below one of n's domains, or, for a wildcard "*.base", a
// domain of n at, above or below base.
func (n NoProxy) Exempts(r HostRule) bool {
	switch {
	case r.Host == "*":
		return true
	case strings.HasPrefix(r.Host, "*."):
		base := r.Host[2:]
		if n.Match(base) {
			return true
		}
		for _, d := range n.domains {
			if strings.HasSuffix(d, "."+base) {
				return true
			}
		}
		return false
	}
	return n.Match(r.Host)
}

// NamesLoopback reports whether the rule names a destination on the
// loopback of the host srt runs on: localhost or a name below it, a
// wildcard below localhost, or a loopback address.
func (r HostRule) NamesLoopback() bool {
	return IsLoopbackHost(strings.TrimPrefix(r.Host, "*."))
}
