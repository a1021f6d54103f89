package decider

import (
	"errors"
	"net/netip"
	"strings"
)

// ValidEntry checks a hello list entry against the grammar of
// allowedDomains (deny=false) and deniedDomains entries: an optional
// ":port" (1-65535, no leading zero), an IPv6 literal only in brackets,
// no scheme, path or CIDR, a wildcard only as a leading "*." before a name
// of at least two labels, a single-label name only for localhost, and a
// bare "*" only in a deny list.
func ValidEntry(e string, deny bool) error {
	host := e
	if strings.Count(e, ":") >= 2 && !strings.HasPrefix(e, "[") {
		return errors.New("an IPv6 address must be in brackets")
	}
	if strings.HasPrefix(e, "[") {
		end := strings.IndexByte(e, ']')
		if end < 0 {
			return errors.New("no closing bracket")
		}
		if rest := e[end+1:]; rest != "" && (!strings.HasPrefix(rest, ":") || !portOK(rest[1:])) {
			return errors.New("only :port may follow the brackets")
		}
		addr := e[1:end]
		if i := strings.IndexByte(addr, '%'); i >= 0 {
			addr = addr[:i]
		}
		if _, err := netip.ParseAddr(addr); err != nil {
			return errors.New("not an IP address in brackets")
		}
		return nil
	}
	if i := strings.IndexByte(e, ':'); i >= 0 && portOK(e[i+1:]) {
		host = e[:i]
	}
	switch {
	case strings.Contains(host, "://") || strings.ContainsAny(host, "/:"):
		return errors.New("a scheme, a path, a CIDR or a bad port")
	case host == "*":
		if !deny {
			return errors.New(`"*" only in deniedDomains`)
		}
		return nil
	case host == "localhost":
		return nil
	case strings.HasPrefix(host, "*."):
		host = host[2:]
		if strings.Contains(host, "*") {
			return errors.New(`"*" only as the leading "*."`)
		}
	case strings.Contains(host, "*"):
		return errors.New(`"*" only as the leading "*."`)
	}
	if !strings.Contains(host, ".") || strings.HasPrefix(host, ".") || strings.HasSuffix(host, ".") || strings.Contains(host, "..") {
		return errors.New("a name needs two labels and no empty one")
	}
	return nil
}

func portOK(s string) bool {
	if s == "" || len(s) > 5 || s[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n >= 1 && n <= 65535
}
