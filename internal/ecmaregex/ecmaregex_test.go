package ecmaregex

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		src      string
		captures int
		err      string // substring of the error; "" for valid
	}{
		{`oauth_token:\s*(\S+)`, 1, ""},
		{`password (?:\S+)`, 0, ""},
		{`(a)(b(c))`, 3, ""},
		{`(?<tok>\w+)`, 1, ""},
		{`(?<a>x)(?<b>y)\k<a>`, 2, ""},
		{`(?<=token=)(\w+)`, 1, ""},
		{`(?<!x)(y)`, 1, ""},
		{`(?=a)(?!b)`, 0, ""},
		{`(?=a)*(b)`, 1, ""}, // Annex B: a lookahead may be quantified
		{`\k<x>`, 0, ""},     // no named groups: the letter k
		{`(a)\1\2`, 1, ""},   // Annex B: \2 is an octal escape
		{`a{`, 0, ""},        // Annex B: a literal brace
		{`a{1`, 0, ""},       //
		{`a{1,2}?`, 0, ""},   //
		{`]`, 0, ""},         //
		{`}`, 0, ""},         //
		{`[\d-z]`, 0, ""},    // Annex B: class escape in a range
		{`[a-]`, 0, ""},      //
		{`[-a]`, 0, ""},      //
		{`[]`, 0, ""},        // matches nothing, but valid
		{`[^]`, 0, ""},       //
		{`\c`, 0, ""},        //
		{`[\c]`, 0, ""},      //
		{`(`, 0, "unterminated group"},
		{`)`, 0, "unmatched ')'"},
		{`a)`, 0, "unmatched ')'"},
		{`[a`, 0, "unterminated character class"},
		{`*a`, 0, "nothing to repeat"},
		{`a**`, 0, "nothing to repeat"},
		{`a|*`, 0, "nothing to repeat"},
		{`^*`, 0, "nothing to repeat"},
		{`\b+`, 0, "nothing to repeat"},
		{`(?<=a)*`, 0, "nothing to repeat"},
		{`{1}`, 0, "nothing to repeat"},
		{`a{2,1}`, 0, "numbers out of order"},
		{`[z-a]`, 0, "range out of order"},
		{`(?i:a)`, 0, "invalid group"},
		{`(?P<n>a)`, 0, "invalid group"},
		{`(?<1a>x)`, 0, "invalid capture group name"},
		{`(?<a>x)(?<a>y)`, 0, "duplicate capture group name"},
		{`(?<a>x)\k<b>`, 0, "invalid named capture referenced"},
		{`(?<a>x)\k`, 0, "invalid named capture referenced"},
		{`a\`, 0, `\ at end of pattern`},
	}
	for _, tt := range tests {
		got, err := Check(tt.src)
		switch {
		case tt.err == "" && err != nil:
			t.Errorf("Check(%q) = %v, want %d captures", tt.src, err, tt.captures)
		case tt.err == "" && got != tt.captures:
			t.Errorf("Check(%q) = %d captures, want %d", tt.src, got, tt.captures)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Check(%q) = %d, %v; want error %q", tt.src, got, err, tt.err)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{`(a)`, `(?<n>x)\k<n>`, `[a-z]{1,3}`, `(?<=a)b`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		n, err := Check(src)
		if err == nil && (n < 0 || n > len(src)) {
			t.Errorf("Check(%q) = %d captures for %d characters", src, n, len(src))
		}
	})
}
