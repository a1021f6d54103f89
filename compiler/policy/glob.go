package policy

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Doublestar translates an srt glob (docs/reference.md#glob-syntax) into the
// syntax of github.com/bmatcuk/doublestar/v4, which both the compiler and
// the runtime match with:
//
//   - "*", "**" and "?" mean the same in both;
//   - "[...]" is a set when it spells one: non-empty, ranges in order.
//     Inside it "!" and "^" do not negate in srt, so they are escaped. A
//     bracket that spells no set ("[]", "[user-id]", "[2024-01-15]") and an
//     unmatched "[" or "]" are literal text, so they are escaped;
//   - srt has no braces and no escapes, so "{", "}" and "\" are escaped.
func Doublestar(glob string) string {
	var b strings.Builder
	for i := 0; i < len(glob); i++ {
		c := glob[i]
		switch c {
		case '{', '}', '\\', ']':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '[':
			end := strings.IndexByte(glob[i+1:], ']')
			if end < 0 || !validSet(glob[i+1:i+1+end]) {
				b.WriteString("\\[")
				continue
			}
			set := glob[i+1 : i+1+end]
			b.WriteByte('[')
			for j := 0; j < len(set); j++ {
				if set[j] == '!' || set[j] == '^' || set[j] == '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(set[j])
			}
			b.WriteByte(']')
			i += end + 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// validSet reports whether the text between "[" and "]" spells a set: it is
// not empty, and every range a-z inside it runs forwards. A "-" at either
// end is a member.
func validSet(set string) bool {
	if set == "" {
		return false
	}
	for j := 1; j+1 < len(set); j++ {
		if set[j] == '-' && set[j-1] > set[j+1] {
			return false
		}
	}
	return true
}

// Covers reports whether the rule names p or an ancestor of p, as a name or,
// for a pattern, by matching p or one of its ancestors. Both are symbolic
// and normalised. Only "/" covers paths under another root: whether /home
// covers ${HOME} is a fact of the host, for the resolve step.
func (r PathRule) Covers(p Path) bool {
	if r.Path == Abs.Path() {
		// "/" covers everything: the symbolic roots are absolute too.
		return true
	}
	if r.Path.Contains(p) {
		return true
	}
	if !r.Pattern {
		return false
	}
	ds := Doublestar(r.Path.String())
	return p.ancestors(func(a Path) bool {
		ok, err := doublestar.Match(ds, a.String())
		return err == nil && ok
	})
}
