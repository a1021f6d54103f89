package seatbelt

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"srt.dev/compiler/policy"
)

// MaxString is the longest string literal the emitter writes, in bytes.
// sandbox-exec rejects a profile with a literal of about 1025 bytes or more
// ("Error reading string", docs/reference.md#macos-profile-layout and docs/reference.md#macos-pitfalls).
const MaxString = 1000

// An Error is a setting the emitter refuses to express as a Seatbelt rule,
// rather than emit a rule that might match another path than the one
// written.
type Error struct {
	Origin policy.Origin
	Msg    string
}

func (e *Error) Error() string {
	if e.Origin.Pos != "" {
		return e.Origin.Pos + ": " + e.Origin.Key + ": " + e.Msg
	}
	return e.Origin.Key + ": " + e.Msg
}

// quote writes s as an SBPL string literal. The escaping is JSON's, as in
// the reference (docs/reference.md#macos-filters, docs/reference.md#macos-pitfalls): `"` and `\` get a backslash; every
// other byte, non-ASCII and DEL included, is written as it is. Control
// characters are refused: whether Seatbelt's reader understands \t, \n or
// \u00XX is not established (docs/reference.md#macos-pitfalls), and a wrongly read deny would be a
// hole, so a path with one gets an error instead of a rule. Over-long
// literals are refused too.
func quote(s string, o policy.Origin) (string, error) {
	if !utf8.ValidString(s) {
		return "", &Error{o, fmt.Sprintf("%q is not valid UTF-8", s)}
	}
	for _, r := range s {
		if r < 0x20 {
			return "", &Error{o, fmt.Sprintf("%q has a control character (U+%04X); Seatbelt is not known to read it in a profile, so no rule is emitted for it: rename the file or drop the entry", s, r)}
		}
	}
	if len(s) > MaxString {
		return "", &Error{o, fmt.Sprintf("a string of %d bytes is over the %d bytes a Seatbelt profile can hold in one string: shorten the path or pattern", len(s), MaxString)}
	}
	return escape(s), nil
}

// StateRules are rules to append to a profile (later rules win in SBPL)
// that keep srt's own files (policy.SrtState, by kind: concrete absolute
// paths) from the command, whatever the profile allows: read-only, or
// for a hidden kind, not readable either. A path that does not exist yet
// cannot be created (Seatbelt matches the path, not a file).
func StateRules(state map[policy.StateKind][]string) ([]byte, error) {
	var b strings.Builder
	b.WriteString("; " + policy.StateWhy + "\n")
	for _, rule := range policy.SrtState {
		for _, p := range state[rule.Kind] {
			q, err := quote(p, policy.Origin{Key: "srt state"})
			if err != nil {
				return nil, err
			}
			if rule.Hidden {
				fmt.Fprintf(&b, "(deny file-read* (subpath %s))\n", q)
			}
			fmt.Fprintf(&b, "(deny file-write* (subpath %s))\n", q)
		}
	}
	return []byte(b.String()), nil
}
