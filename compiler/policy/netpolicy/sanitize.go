package netpolicy

import (
	"strings"
	"unicode/utf16"
)

// invisible reports the characters that a reason or a violation line may
// not carry (docs/reference.md#violations): C0, DEL and C1 controls, soft hyphen,
// the Arabic letter mark, zero-width and direction marks and overrides,
// line and paragraph separators, invisible operators, the BOM and the tag
// characters.
func invisible(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f,
		r == 0xad, r == 0x61c,
		r >= 0x200b && r <= 0x200f,
		r == 0x2028, r == 0x2029,
		r >= 0x202a && r <= 0x202e,
		r >= 0x2060 && r <= 0x2064,
		r >= 0x2066 && r <= 0x2069,
		r == 0xfeff,
		r >= 0xe0000 && r <= 0xe007f:
		return true
	}
	return false
}

// SanitizeReason makes text safe to show: each run of invisible characters
// becomes one space, "<" and ">" are removed, the ends are trimmed, and the
// result is cut to max UTF-16 code units (0: no limit) without splitting a
// surrogate pair.
func SanitizeReason(text string, max int) string {
	var b strings.Builder
	inRun := false
	for _, r := range text {
		switch {
		case invisible(r):
			if !inRun {
				b.WriteByte(' ')
			}
			inRun = true
			continue
		case r == '<' || r == '>':
		default:
			b.WriteRune(r)
		}
		inRun = false
	}
	s := strings.TrimSpace(b.String())
	if max > 0 {
		units := 0
		for i, r := range s {
			n := utf16.RuneLen(r)
			if n < 0 {
				n = 1
			}
			if units+n > max {
				s = s[:i]
				break
			}
			units += n
		}
	}
	return strings.TrimRight(s, " \t")
}

// StatusPhrase turns a reason into an HTTP status phrase: sanitised, cut to
// 500 UTF-16 units, and every character outside printable ASCII replaced by
// "?" (docs/reference.md#refusal-responses).
func StatusPhrase(reason string) string {
	s := []rune(SanitizeReason(reason, 500))
	for i, r := range s {
		if r < 0x20 || r > 0x7e {
			s[i] = '?'
		}
	}
	return string(s)
}
