// Package untrusted is where srt shows a string that something it does
// not trust chose: a host name a sandboxed command sent (in a SOCKS5
// handshake, any byte at all), a path it wrote to, a reason an ask
// callback gave, a key of a git configuration it wrote. Every output of
// srt that carries such a string (the refusal lines, the violation lines,
// srt's warnings, the audit log) embeds it through Quote, so that what a
// command sends cannot move the terminal's cursor, erase srt's own lines,
// reorder them (bidirectional overrides) or start a line that looks like
// one of srt's.
package untrusted

import (
	"strconv"
	"unicode/utf8"
)

// Quote returns s as srt shows it. A plain word (valid UTF-8, not empty,
// of characters that are printable in Go's sense (strconv.IsPrint:
// letters, marks, numbers, punctuation and symbols) other than the
// double quote and the backslash) is shown as it is: an ordinary host
// name or path reads as it always has. Anything else is shown Go-quoted
// (strconv.Quote): a control character (C0 with ESC, CR, LF and TAB, DEL,
// C1), a format character (bidirectional overrides and isolates,
// zero-width characters), a space of any kind, a line separator, a byte
// that is not UTF-8, a quote or a backslash becomes an escape.
//
// So a shown string never holds a raw control or a line break, and it
// reads one way only: one that starts with a double quote is always a
// quoted form, which strconv.Unquote turns back into the exact bytes
// sent; any other is those bytes.
func Quote(s string) string {
	if plain(s) {
		return s
	}
	return strconv.Quote(s)
}

// plain reports whether Quote shows s as it is.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || r == ' ' || r == '"' || r == '\\' || !strconv.IsPrint(r) {
			return false
		}
		i += n
	}
	return true
}
