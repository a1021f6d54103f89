package untrusted

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestQuote(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"host name", "pypi.org", "pypi.org"},
		{"IPv6 literal", "::1", "::1"},
		{"international name", "bücher.example", "bücher.example"},
		{"path", "/home/me/proj/.git/config", "/home/me/proj/.git/config"},
		{"U+FFFD written as such", "a\ufffdb", "a\ufffdb"},
		{"empty", "", `""`},
		{"ESC, CR and LF", "\x1b[2K\rsrt: all clear\n", `"\x1b[2K\rsrt: all clear\n"`},
		{"TAB", "a\tb", `"a\tb"`},
		{"DEL", "a\x7fb", `"a\x7fb"`},
		{"NUL", "a\x00b", `"a\x00b"`},
		{"C1 CSI", "a\u009b2Kb", `"a\u009b2Kb"`},
		{"not UTF-8", "a\xffb", `"a\xffb"`},
		{"right-to-left override", "moc.\u202elive", `"moc.\u202elive"`},
		{"first strong isolate", "a\u2068b", `"a\u2068b"`},
		{"zero-width space", "pypi\u200b.org", `"pypi\u200b.org"`},
		{"line separator", "a\u2028b", `"a\u2028b"`},
		{"no-break space", "a\u00a0b", `"a\u00a0b"`},
		{"space", "a b", `"a b"`},
		{"double quote", `"x"`, `"\"x\""`},
		{"backslash", `a\nb`, `"a\\nb"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.in); got != tt.want {
				t.Errorf("Quote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestQuoteEveryCharacter: for every character and every byte that is not
// UTF-8, alone and inside a word, the shown form is printable, holds no
// line break, and reads one way only: as it is, or quoted and turned back
// into exactly what was given.
func TestQuoteEveryCharacter(t *testing.T) {
	var inputs []string
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if utf8.ValidRune(r) {
			inputs = append(inputs, string(r))
		}
	}
	for b := 0x80; b <= 0xff; b++ {
		inputs = append(inputs, string([]byte{byte(b)}))
	}
	for _, in := range inputs {
		for _, s := range []string{in, "a" + in + "b"} {
			checkShown(t, s, Quote(s))
		}
	}
}

func checkShown(t *testing.T, in, shown string) {
	t.Helper()
	if !utf8.ValidString(shown) {
		t.Fatalf("Quote(%q) = %q is not UTF-8", in, shown)
	}
	for _, r := range shown {
		if !strconv.IsPrint(r) {
			t.Fatalf("Quote(%q) = %q holds %U", in, shown, r)
		}
	}
	if shown == in {
		if strings.HasPrefix(in, `"`) {
			t.Fatalf("Quote(%q) is shown as it is, and starts with a quote", in)
		}
		return
	}
	back, err := strconv.Unquote(shown)
	if err != nil || back != in {
		t.Fatalf("Quote(%q) = %s, which reads back as %q (%v)", in, shown, back, err)
	}
}
