package policy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"srt.dev/internal/whatwg"
)

// A HostRule is one allowedDomains or deniedDomains entry, parsed. Entries
// reach here already validated by the settings grammar; the parse only
// splits and canonicalises them.
type HostRule struct {
	// Entry is the entry as written; deniedDomainReasons is keyed by it.
	Entry string `json:"entry"`
	// Host is "*" (any host, deny lists only), "*.base" (strict subdomains
	// of base, lower-cased), or a host compared case-insensitively: a name
	// as written, or a canonical IP address for a bracketed entry.
	Host string `json:"host"`
	// Port restricts the rule to one destination port; 0 means any port.
	Port int `json:"port,omitempty"`
	// Origin is the setting that wrote the entry.
	Origin Origin `json:"origin"`
}

// ParseHostRule splits an allow or deny entry into host and port
// (docs/reference.md#grammar): "[v6]:port" and "host:port" with a port of 1-65535 and
// no leading zeros; the text inside brackets is canonicalised as the
// grammar does (whatwg.BracketHost). An entry the grammar refuses may parse
// to a rule that matches nothing, or fail; entries reach here validated.
func ParseHostRule(entry string) (HostRule, error) {
	r := HostRule{Entry: entry, Host: entry}
	if strings.HasPrefix(entry, "[") {
		// As in the grammar (docs/reference.md#grammar): without a "]", or with
		// anything but ":port" after it, the whole entry is the host.
		end := strings.IndexByte(entry, ']')
		if end < 0 {
			return r, nil
		}
		rest := entry[end+1:]
		port := 0
		if rest != "" {
			p, ok := parsePort(strings.TrimPrefix(rest, ":"))
			if !ok || !strings.HasPrefix(rest, ":") {
				return r, nil
			}
			port = p
		}
		r.Host, r.Port = whatwg.BracketHost(entry[1:end]), port
		if strings.HasPrefix(r.Host, "*.") {
			r.Host = strings.ToLower(r.Host)
		}
		return r, nil
	}
	if strings.Count(entry, ":") == 1 {
		i := strings.IndexByte(entry, ':')
		p, ok := parsePort(entry[i+1:])
		if !ok {
			return r, fmt.Errorf("%q: not a port: %q", entry, entry[i+1:])
		}
		r.Host, r.Port = entry[:i], p
	} else if strings.Contains(entry, ":") {
		return r, fmt.Errorf("%q: put an IPv6 address in brackets", entry)
	}
	if strings.HasPrefix(r.Host, "*.") {
		r.Host = strings.ToLower(r.Host)
	}
	return r, nil
}

// ParseHostPattern parses a host pattern (docs/reference.md#grammar): a
// network.mitmProxy.domains, network.tlsTerminate.excludeDomains or
// injectHosts entry, which has no port. The rule's Host is what matches a
// canonical destination host (CanonicalHost): an IPv6 literal, the only
// pattern with a ":", without its zone and written canonically (an
// IPv4-mapped one as the IPv4 address); "*.base" lower-cased; any other
// pattern as written. It refuses what the grammar refuses, so that no
// entry can mean more here than there ("*", "*.com", "host:443").
func ParseHostPattern(entry string) (HostRule, error) {
	r := HostRule{Entry: entry, Host: entry}
	if strings.Contains(entry, ":") {
		addr, zone, zoned := strings.Cut(entry, "%")
		a, err := netip.ParseAddr(addr)
		if err != nil || !a.Is6() || zoned && !validZone(zone) {
			return r, fmt.Errorf("%q: not a host pattern: a \":\" is only for an IPv6 address, and a host pattern has no port", entry)
		}
		r.Host = a.Unmap().String()
		return r, nil
	}
	if strings.Contains(entry, "/") {
		return r, fmt.Errorf("%q: not a host pattern: no scheme or path", entry)
	}
	if entry == "localhost" {
		return r, nil
	}
	if base, ok := strings.CutPrefix(entry, "*."); ok {
		labels := strings.Split(base, ".")
		if len(labels) < 2 || slices.Contains(labels, "") {
			return r, fmt.Errorf("%q: not a host pattern: a wildcard needs at least two labels after \"*.\" (*.example.com)", entry)
		}
		r.Host = strings.ToLower(entry)
		return r, nil
	}
	if strings.Contains(entry, "*") || !strings.Contains(entry, ".") || strings.HasPrefix(entry, ".") || strings.HasSuffix(entry, ".") {
		return r, fmt.Errorf("%q: not a host pattern: a host name with a dot inside (example.com), a wildcard (*.example.com), localhost or an IPv6 address", entry)
	}
	return r, nil
}

// validZone reports whether an IPv6 zone is one the grammar admits
// (Node's net.isIPv6): letters, digits, ".", ":" and "-".
func validZone(z string) bool {
	if z == "" {
		return false
	}
	for i := 0; i < len(z); i++ {
		c := z[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// ParseHostPatterns parses host patterns in order; nil gives nil.
func ParseHostPatterns(entries []string) (HostList, error) {
	if entries == nil {
		return nil, nil
	}
	l := make(HostList, 0, len(entries))
	for _, e := range entries {
		r, err := ParseHostPattern(e)
		if err != nil {
			return nil, err
		}
		l = append(l, r)
	}
	return l, nil
}

// Entries returns the entries of l as written.
func (l HostList) Entries() []string {
	out := make([]string, len(l))
	for i, r := range l {
		out[i] = r.Entry
	}
	return out
}

// parsePort accepts 1-65535 without leading zeros.
func parsePort(s string) (int, bool) {
	if s == "" || s[0] == '0' || len(s) > 5 || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, _ := strconv.Atoi(s)
	return n, n >= 1 && n <= 65535
}

// Match reports whether the rule matches a destination: host must be
// canonical (CanonicalHost) and port its port (docs/reference.md#host-matching).
func (r HostRule) Match(host string, port int) bool {
	if r.Port != 0 && r.Port != port {
		return false
	}
	switch {
	case r.Host == "*":
		return true
	case strings.HasPrefix(r.Host, "*."):
		return !isIPLiteral(host) && strings.HasSuffix(strings.ToLower(host), r.Host[1:])
	}
	return strings.EqualFold(r.Host, host)
}

func isIPLiteral(host string) bool {
	_, err := netip.ParseAddr(host)
	return err == nil
}

// A HostList is an ordered list of rules; the first that matches decides.
type HostList []HostRule

// ParseHostList parses entries in order.
func ParseHostList(entries []string) (HostList, error) {
	l := make(HostList, 0, len(entries))
	for _, e := range entries {
		r, err := ParseHostRule(e)
		if err != nil {
			return nil, err
		}
		l = append(l, r)
	}
	return l, nil
}

// Match returns the first rule that matches the destination.
func (l HostList) Match(host string, port int) (HostRule, bool) {
	for _, r := range l {
		if r.Match(host, port) {
			return r, true
		}
	}
	return HostRule{}, false
}

// ErrMalformedHost is the reason a destination host is refused before any
// rule is consulted.
var ErrMalformedHost = errors.New("malformed host")

// CanonicalHost validates a destination host as a client sent it (CONNECT
// authority, URL host, SOCKS address) and returns the form every decision
// uses (docs/reference.md#destination-host): at most 255 characters; no "%"; an IP
// literal, or only A-Z a-z 0-9 . _ -; then lower-cased, IPv4 numbers in any
// radix or shorthand written as a dotted quad, IPv6 compressed without
// brackets, IPv4-mapped IPv6 as IPv4, and one trailing dot removed.
func CanonicalHost(raw string) (string, error) {
	if raw == "" || len(raw) > 255 {
		return "", ErrMalformedHost
	}
	h := raw
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if strings.Contains(h, "%") {
		return "", ErrMalformedHost
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().String(), nil
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", ErrMalformedHost
		}
	}
	canon, err := whatwg.HostOf(h)
	if err != nil {
		// The URL parser refuses it (1.2.3.4.5, 256.1.1.1): the spelling
		// is used as is, and matches only a rule written the same way.
		canon = strings.ToLower(h)
	}
	return strings.TrimSuffix(canon, "."), nil
}
