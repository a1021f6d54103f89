// Package whatwg parses hosts and URLs the way the WHATWG URL Standard
// (https://url.spec.whatwg.org/) does, which is what the reference runtime's
// JavaScript `new URL()` does. Go's net/url follows RFC 3986 and accepts and
// rejects different strings, so the settings grammar needs this.
//
// It implements the parts the settings grammar uses: the host parser
// (domain to ASCII, IPv4 numbers in every radix and shorthand, IPv6), the
// authority of a URL (userinfo, host, port), and "can this be parsed as an
// absolute URL". Domain-to-ASCII uses golang.org/x/net/idna with the UTS #46
// options the URL Standard names; it follows a different Unicode version than
// a given Node release, so exotic code points may be judged differently.
package whatwg

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrInvalid reports a string the URL Standard refuses.
var ErrInvalid = errors.New("not a valid URL host")

var specialPorts = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true, "file": true}

// HostOf returns the hostname of "http://" + authority + "/": userinfo and
// port are dropped, names are lower-cased and IDNA-encoded, IPv4 numbers in
// any radix or shorthand become dotted quads, and IPv6 literals (in brackets)
// are compressed, without the brackets.
func HostOf(authority string) (string, error) {
	in := trimControlAndSpace(authority)
	// The authority ends at the first path, query or fragment delimiter;
	// for http a backslash counts as a slash.
	if i := strings.IndexAny(in, "/\\?#"); i >= 0 {
		in = in[:i]
	}
	host, _, err := splitAuthority(in)
	if err != nil {
		return "", err
	}
	if host == "" {
		return "", ErrInvalid
	}
	return parseHost(host, true)
}

// BracketHost canonicalises the text inside the brackets of a network
// entry such as "[2001:db8::1]:443" the way the reference runtime does
// (docs/reference.md#grammar): a "%zone" is dropped; an IPv6 address is
// compressed, an IPv4-mapped one written as IPv4; anything else becomes the
// hostname of "http://<text>/" (HostOf) less one trailing dot, or stays as it
// is when that URL is invalid.
func BracketHost(inner string) string {
	if i := strings.IndexByte(inner, '%'); i >= 0 {
		inner = inner[:i]
	}
	if a, err := netip.ParseAddr(inner); err == nil && a.Is6() {
		return a.Unmap().String()
	}
	h, err := HostOf(inner)
	if err != nil {
		return inner
	}
	return strings.TrimSuffix(h, ".")
}

// IsAbsoluteURL reports whether the URL Standard parses s, with no base, as
// a URL: any scheme is accepted ("proxy:3128", "mailto:x@y"); a special
// scheme (http, https, ws, wss, ftp) needs a valid host and port.
func IsAbsoluteURL(s string) bool {
	s = trimControlAndSpace(s)
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !isSchemeStart(s[0]) {
		return false
	}
	for i := 1; i < colon; i++ {
		if !isSchemeChar(s[i]) {
			return false
		}
	}
	scheme := strings.ToLower(s[:colon])
	rest := s[colon+1:]
	switch {
	case scheme == "file":
		if strings.HasPrefix(rest, "//") || strings.HasPrefix(rest, "\\\\") {
			auth := rest[2:]
			if i := strings.IndexAny(auth, "/\\?#"); i >= 0 {
				auth = auth[:i]
			}
			if auth == "" {
				return true
			}
			_, err := parseHost(auth, true)
			return err == nil
		}
		return true
	case specialPorts[scheme]:
		rest = strings.TrimLeft(rest, "/\\")
		if i := strings.IndexAny(rest, "/\\?#"); i >= 0 {
			rest = rest[:i]
		}
		host, _, err := splitAuthority(rest)
		if err != nil || host == "" {
			return false
		}
		_, err = parseHost(host, true)
		return err == nil
	case strings.HasPrefix(rest, "//"):
		auth := rest[2:]
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			auth = auth[:i]
		}
		host, _, err := splitAuthority(auth)
		if err != nil {
			return false
		}
		if host == "" {
			return true
		}
		_, err = parseHost(host, false)
		return err == nil
	default:
		return true // an opaque path accepts anything
	}
}

func isSchemeStart(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSchemeChar(c byte) bool {
	return isSchemeStart(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

// trimControlAndSpace removes leading and trailing C0 controls and spaces,
// and every tab and newline, as the URL parser does before it starts.
func trimControlAndSpace(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
	if strings.ContainsAny(s, "\t\n\r") {
		s = tabsAndNewlines.Replace(s)
	}
	return s
}

// tabsAndNewlines removes what the URL parser drops from the input.
var tabsAndNewlines = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// splitAuthority splits an authority into host and port text, dropping any
// userinfo (everything up to the last "@").
func splitAuthority(auth string) (host, port string, err error) {
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		auth = auth[i+1:]
		if auth == "" {
			return "", "", ErrInvalid
		}
	}
	inBrackets := false
	for i := 0; i < len(auth); i++ {
		switch auth[i] {
		case '[':
			inBrackets = true
		case ']':
			inBrackets = false
		case ':':
			if !inBrackets {
				host, port = auth[:i], auth[i+1:]
				if host == "" {
					return "", "", ErrInvalid
				}
				for j := 0; j < len(port); j++ {
					if port[j] < '0' || port[j] > '9' {
						return "", "", ErrInvalid
					}
				}
				if port != "" {
					if n, err := strconv.ParseUint(port, 10, 64); err != nil || n > 65535 {
						return "", "", ErrInvalid
					}
				}
				return host, port, nil
			}
		}
	}
	return auth, "", nil
}

// parseHost is the URL Standard's host parser; special selects the domain
// rules of special schemes, otherwise the opaque-host rules apply.
func parseHost(in string, special bool) (string, error) {
	if strings.HasPrefix(in, "[") {
		if !strings.HasSuffix(in, "]") {
			return "", ErrInvalid
		}
		a, err := netip.ParseAddr(in[1 : len(in)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", ErrInvalid
		}
		return a.String(), nil
	}
	if !special {
		for _, r := range in {
			if isForbiddenHost(r) {
				return "", ErrInvalid
			}
		}
		return in, nil
	}
	decoded := percentDecode(in)
	ascii, err := domainToASCII(decoded)
	if err != nil || ascii == "" {
		return "", ErrInvalid
	}
	for _, r := range ascii {
		if isForbiddenHost(r) || r < 0x20 || r == '%' || r == 0x7f {
			return "", ErrInvalid
		}
	}
	if endsInNumber(ascii) {
		return parseIPv4(ascii)
	}
	return ascii, nil
}

var profile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.CheckJoiners(true),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
)

func domainToASCII(s string) (string, error) {
	return profile.ToASCII(s)
}

// isForbiddenHost reports the URL Standard's forbidden host code points.
func isForbiddenHost(r rune) bool {
	switch r {
	case 0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
}

// endsInNumber is the URL Standard's "ends in a number" checker.
func endsInNumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number parses one part of an IPv4 address: decimal, octal with a
// leading 0, or hexadecimal with 0x.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	if s == "" {
		return 0, true
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 1 << 40, true // too large for any part; fails below
		}
		return 0, false
	}
	return n, true
}

// parseIPv4 is the URL Standard's IPv4 parser; it returns a dotted quad.
func parseIPv4(s string) (string, error) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return "", ErrInvalid
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return "", ErrInvalid
		}
		nums[i] = n
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return "", ErrInvalid
		}
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return "", ErrInvalid
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String(), nil
}
