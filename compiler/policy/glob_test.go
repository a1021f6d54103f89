package policy

import (
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestDoublestar(t *testing.T) {
	tests := []struct {
		glob, name string
		want       bool
	}{
		{"src/**/*.ts", "src/a/b.ts", true},
		{"**/.env", ".env", true},
		{"**/.env", "a/b/.env", true},
		{"*.key", "a/b.key", false},
		{"a?c", "abc", true},
		{"[ab]x", "bx", true},
		{"[a-c]x", "bx", true},
		{"[!a]x", "!x", true}, // "!" does not negate
		{"[!a]x", "bx", false},
		{"[^a]x", "^x", true},
		{"[user-id]", "[user-id]", true}, // backwards range: literal
		{"[user-id]", "u", false},
		{"[2024-01-15]", "[2024-01-15]", true},
		{"[]", "[]", true},
		{"a[b", "a[b", true},
		{"a]b", "a]b", true},
		{"{a,b}", "{a,b}", true}, // no braces in srt
		{"{a,b}", "a", false},
		{`a\b`, `a\b`, true},
		{"list[].ts", "list[].ts", true},
		{"x-[a-]", "x--", true},
		{"${HOME}/.*", "${HOME}/.npm", true},
	}
	for _, tt := range tests {
		p := Doublestar(tt.glob)
		got, err := doublestar.Match(p, tt.name)
		if err != nil || got != tt.want {
			t.Errorf("Match(Doublestar(%q) = %q, %q) = %v, %v; want %v", tt.glob, p, tt.name, got, err, tt.want)
		}
	}
}
