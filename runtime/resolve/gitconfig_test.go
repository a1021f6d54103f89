package resolve

import (
	"reflect"
	"testing"
)

func TestParseGitConfig(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []GitConfigEntry
		ok         bool
	}{
		{"init", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n", []GitConfigEntry{{"core.repositoryformatversion", "0"}, {"core.bare", "false"}}, true},
		{"subsection", "[remote \"origin\"]\n  url = https://x/y.git # c\n", []GitConfigEntry{{"remote.origin.url", "https://x/y.git"}}, true},
		{"case and bool", "[Core]\nHooksPath = \".husky\"\nfsmonitor\n", []GitConfigEntry{{"core.hookspath", ".husky"}, {"core.fsmonitor", "true"}}, true},
		{"continued", "[core]\nfsmonitor = a\\\nb\n", []GitConfigEntry{{"core.fsmonitor", "ab"}}, true},
		{"header line variable", "[core] fsmonitor = x\n", []GitConfigEntry{{"core.fsmonitor", "x"}}, true},
		{"no section", "fsmonitor = x\n", nil, false},
		{"open quote", "[core]\nfsmonitor = \"x\n", nil, false},
	} {
		got, ok := ParseGitConfig([]byte(tc.text))
		if ok != tc.ok || (tc.ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: ParseGitConfig = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
