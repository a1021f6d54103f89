package policy

import "strings"

// GlobRegex translates an srt glob into an anchored regular expression
// (docs/reference.md#glob-regex), the form a Seatbelt profile matches paths
// with. It is the one translation of the rule; a Linux use of the same
// rule calls it too. The output uses only ^ $ ( ) ? * . [..] [^/] and
// backslash escapes, so it means the same in POSIX ERE (Seatbelt) and in
// Go's regexp (the tests):
//
//   - "/" is a separator; "?" is one character other than "/";
//   - a run of stars followed by "/" with at least two stars ends in a
//     globstar-slash "(.*/)?" (zero or more whole directories); of the
//     stars left, one is "[^/]*" and two or more are ".*" (which crosses
//     separators: "x**y" is "x.*y");
//   - "[...]" runs to the first "]"; it is a set when it spells one (see
//     Doublestar), and "!" and "^" never negate; members . ^ $ + { } ( ) |
//     and \ are escaped, the rest (including "/", "*", "?", "[") stand;
//   - any other text is literal, with . * + ? ^ $ { } ( ) | [ ] \ escaped.
//
// Adjacent wildcards are reduced to the fewest equivalent tokens ("**/**/"
// is "**/"; "*", "**/", "*" is ".*"), so that no regex backtracks
// exponentially. A deny appends "(/.*)?" before "$" (see DenyRegex).
func GlobRegex(glob string) string {
	return "^" + globBody(glob) + "$"
}

// DenyRegex is GlobRegex with a subtree tail: a deny covers everything
// beneath each path it matches, as a plain path does.
func DenyRegex(glob string) string {
	return "^" + globBody(glob) + "(/.*)?$"
}

// RegexEscape escapes s so that a regular expression matches it as text.
func RegexEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`.*+?^$(){}|[]\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// The wildcard tokens of a translated glob.
const (
	tokStar      = "[^/]*"
	tokStarStar  = ".*"
	tokGlobSlash = "(.*/)?"
	tokSeparator = "/"
	tokOneChar   = "[^/]"
)

// globBody is the regex of glob without its anchors.
func globBody(glob string) string {
	var toks []string
	var text strings.Builder
	flush := func() {
		if text.Len() > 0 {
			toks = append(toks, RegexEscape(text.String()))
			text.Reset()
		}
	}
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '/':
			flush()
			toks = append(toks, tokSeparator)
		case '?':
			flush()
			toks = append(toks, tokOneChar)
		case '*':
			flush()
			j := i
			for j < len(glob) && glob[j] == '*' {
				j++
			}
			n := j - i
			globSlash := n >= 2 && j < len(glob) && glob[j] == '/'
			if globSlash {
				n -= 2
			}
			switch {
			case n == 1:
				toks = append(toks, tokStar)
			case n >= 2:
				toks = append(toks, tokStarStar)
			}
			if globSlash {
				toks = append(toks, tokGlobSlash)
				j++ // the "/" is part of the token
			}
			i = j - 1
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 || !validSet(glob[i+1:i+1+end]) {
				text.WriteByte(c)
				continue
			}
			flush()
			toks = append(toks, setRegex(glob[i+1:i+1+end]))
			i += end + 1
		default:
			text.WriteByte(c)
		}
	}
	flush()
	return strings.Join(simplify(toks), "")
}

// setRegex is the regex of a valid set's members.
func setRegex(set string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(set); i++ {
		if strings.IndexByte(`.^$+{}()|\`, set[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(set[i])
	}
	b.WriteByte(']')
	return b.String()
}

// simplify reduces runs of adjacent wildcards to the fewest tokens that
// match the same strings, until nothing changes:
//
//	(.*/)? (.*/)?        → (.*/)?
//	.* with [^/]* or (.*/)? on either side → .*
//	[^/]* (.*/)? [^/]*   → .*
//	[^/]* [^/]*          → [^/]*
func simplify(toks []string) []string {
	for changed := true; changed; {
		changed = false
		for i := 0; i+1 < len(toks); i++ {
			a, b := toks[i], toks[i+1]
			var merged string
			switch {
			case a == tokGlobSlash && b == tokGlobSlash:
				merged = tokGlobSlash
			case a == tokStarStar && (b == tokStar || b == tokGlobSlash || b == tokStarStar),
				b == tokStarStar && (a == tokStar || a == tokGlobSlash):
				merged = tokStarStar
			case a == tokStar && b == tokStar:
				merged = tokStar
			case a == tokStar && b == tokGlobSlash && i+2 < len(toks) && toks[i+2] == tokStar:
				toks = append(toks[:i], append([]string{tokStarStar}, toks[i+3:]...)...)
				changed = true
				continue
			default:
				continue
			}
			toks = append(toks[:i], append([]string{merged}, toks[i+2:]...)...)
			changed = true
		}
	}
	return toks
}

// GlobSample is one path a glob matches: every "?" and every run of "*"
// replaced by "x", every set by its first member. A deny glob "covers" an allow pattern when it matches its sample
// (docs/reference.md#macos-reads, step 4).
func GlobSample(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '?':
			b.WriteByte('x')
		case '*':
			for i+1 < len(glob) && glob[i+1] == '*' {
				i++
			}
			b.WriteByte('x')
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 || !validSet(glob[i+1:i+1+end]) {
				b.WriteByte(c)
				continue
			}
			b.WriteByte(glob[i+1])
			i += end + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// LastSetEnd is the index just past the last "[...]" of glob that spells a
// set, or -1 when there is none.
func LastSetEnd(glob string) int {
	last := -1
	for i := 0; i < len(glob); i++ {
		if glob[i] != '[' {
			continue
		}
		end := strings.IndexByte(glob[i+1:], ']')
		if end >= 0 && validSet(glob[i+1:i+1+end]) {
			i += end + 1
			last = i + 1
		}
	}
	return last
}
