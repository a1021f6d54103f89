package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

// A host may hand a value it stores back re-encoded: base64 in a JSON
// API, hex in a listing, %-escaped in a redirect, \u-escaped in JSON,
// entity-escaped in an XML listing or an HTML error page, upper-cased.
// encodedForms lists those forms of a real value, each with the same
// form of its stand-in, for the responses that are read whole (see
// Injector.readsAll). A form the encoders of the common languages and
// services write is found; one a host makes up (an escape of a letter
// that needs none, a line-wrapped base64, a value cut by the server)
// is not: docs/tls-and-credentials.md says what is left open.

// minEncoded is the shortest encoded form looked for: a shorter one
// would be met by chance in ordinary base64 or hex text, and be changed
// there.
const minEncoded = 12

// encodedForms returns the re-encoded forms of real, each paired with
// the same form of stand, without real itself and without repeats.
// stand is never shorter than real (the stand-in is padded to the
// secret's length): where the form is a piece of a longer encoding
// (base64, hex), the stand-in's form is cut to the length of real's, so
// that what follows still decodes.
func encodedForms(real, stand []byte) []pair {
	var out []pair
	seen := map[string]bool{string(real): true}
	add := func(old, new []byte) {
		if len(old) < minEncoded || seen[string(old)] {
			return
		}
		seen[string(old)] = true
		out = append(out, pair{old, new})
	}
	// A piece of a longer encoding keeps its length where it can.
	cut := func(b []byte, n int) []byte { return b[:min(n, len(b))] }
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for align := range 3 {
			old := base64Inner(enc, real, align)
			add(old, cut(base64Inner(enc, stand, align), len(old)))
		}
	}
	hexReal, hexStand := []byte(hex.EncodeToString(real)), []byte(hex.EncodeToString(stand))
	add(hexReal, cut(hexStand, len(hexReal)))
	add(bytes.ToUpper(hexReal), bytes.ToUpper(cut(hexStand, len(hexReal))))
	add(bytes.ToUpper(real), bytes.ToUpper(stand))
	add(bytes.ToLower(real), bytes.ToLower(stand))
	// The stand-in is letters, digits, _ and -: every escape below leaves
	// it as it is.
	for _, esc := range urlEscapes {
		add([]byte(esc(string(real))), stand)
	}
	for _, esc := range textEscapes {
		add([]byte(esc(string(real))), stand)
	}
	return out
}

// base64Inner is the part of the base64 of b that depends on b alone
// when b starts align bytes (0, 1 or 2) into a group of three: where b
// sits in a longer base64 text, the characters at its two ends also
// hold bits of its neighbours.
func base64Inner(enc *base64.Encoding, b []byte, align int) []byte {
	text := enc.EncodeToString(append(make([]byte, align), b...))
	from := (8*align + 5) / 6      // the first character all of whose bits are b's
	to := (8*align + 8*len(b)) / 6 // one past the last
	if to <= from {
		return nil
	}
	return []byte(text[from:to])
}

// unreserved are the characters RFC 3986 §2.3 never escapes.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// percentEscape escapes every byte of s but the unreserved ones and
// those of keep, with upper-case hexadecimal digits (RFC 3986 §2.1) or
// lower-case ones, and space as plus when plus is set (forms).
func percentEscape(s, keep string, lower, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case unreserved(c) || strings.IndexByte(keep, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		case lower:
			fmt.Fprintf(&b, "%%%02x", c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// urlEscapes are the %-escapes encoders write: Go's QueryEscape and
// Python's quote_plus (forms), Python's quote with its default safe /,
// JavaScript's encodeURIComponent and encodeURI, Go's PathEscape, and
// every escape written with lower-case digits.
var urlEscapes = []func(string) string{
	func(s string) string { return percentEscape(s, "", false, true) },
	func(s string) string { return percentEscape(s, "", false, false) },
	func(s string) string { return percentEscape(s, "", true, false) },
	func(s string) string { return percentEscape(s, "/", false, false) },
	func(s string) string { return percentEscape(s, "!'()*", false, false) },
	func(s string) string { return percentEscape(s, "!'()*;,/?:@&=+$#", false, false) },
	func(s string) string { return percentEscape(s, "$&+:=@", false, false) },
}

// jsonEscape writes s as the inside of a JSON string (RFC 8259 §7):
// " and \ and the controls escaped (\n, \r, \t, \b, \f, else \u00xx),
// html also escaping < > & and U+2028, U+2029 as Go's encoding/json
// does, slash escaping / as PHP does, ascii escaping every non-ASCII
// character as Python's json.dumps does (a pair of surrogates above
// U+FFFF).
func jsonEscape(s string, html, slash, ascii bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20, html && (r == '<' || r == '>' || r == '&'), r == 0x2028 && html, r == 0x2029 && html:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == '/' && slash:
			b.WriteString(`\/`)
		case r >= 0x80 && ascii && r != utf8.RuneError:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// htmlEscape replaces & < > " ' with the entities given for the quotes
// (the encoders differ there: Go's html &#34; &#39;, Python's html
// &quot; &#x27;, XML's &quot; &apos;).
func htmlEscape(s, dquote, squote string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, dquote, "'", squote).Replace(s)
}

// textEscapes are the escapes of a value written into JSON or into
// HTML and XML text.
var textEscapes = []func(string) string{
	func(s string) string { return jsonEscape(s, false, false, false) },
	func(s string) string { return jsonEscape(s, true, false, false) },
	func(s string) string { return jsonEscape(s, false, true, false) },
	func(s string) string { return jsonEscape(s, false, false, true) },
	func(s string) string { return jsonEscape(s, true, true, true) },
	func(s string) string { return htmlEscape(s, "&#34;", "&#39;") },
	func(s string) string { return htmlEscape(s, "&quot;", "&#x27;") },
	func(s string) string { return htmlEscape(s, "&quot;", "&apos;") },
	func(s string) string { return htmlEscape(s, "&quot;", "&#39;") },
}
