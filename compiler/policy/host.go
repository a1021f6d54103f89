package policy

import (
	"errors"
	"fmt"
	"net/netip"
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
