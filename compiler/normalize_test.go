package compiler

import "testing"

func TestNormalize(t *testing.T) {
	tests := []struct {
		in      string
		literal bool
		want    string
		pattern bool
	}{
		{"~", false, "${HOME}", false},
		{"~/", false, "${HOME}", false},
		{"~/.ssh", false, "${HOME}/.ssh", false},
		{"~/.ssh/", false, "${HOME}/.ssh", false},
		{"~user/x", false, "${CWD}/~user/x", false},
		{".", false, "${CWD}", false},
		{"./", false, "${CWD}", false},
		{"./src", false, "${CWD}/src", false},
		{"src/", false, "${CWD}/src", false},
		{"src/.", false, "${CWD}/src", false},
		{"../x", false, "${CWD}/../x", false},
		{"/", false, "/", false},
		{"//etc//./ssh/", false, "/etc/ssh", false},
		{"/data/**", false, "/data", false},
		{"src/**", false, "${CWD}/src", false},
		{"/**", false, "/", false},
		{"**/.env", false, "${CWD}/**/.env", true},
		{"/w/[WIP]", false, "/w/[WIP]", true},
		{"~/.config/*.json", false, "${HOME}/.config/*.json", true},
		{"/x/keep[1]/", true, "/x/keep[1]", false},
		{"/x/**", true, "/x/**", false},
		{"a?b", false, "${CWD}/a?b", true},
	}
	for _, tt := range tests {
		got, pattern := Normalize(tt.in, tt.literal)
		if got != tt.want || pattern != tt.pattern {
			t.Errorf("Normalize(%q, literal=%v) = %q, %v; want %q, %v", tt.in, tt.literal, got, pattern, tt.want, tt.pattern)
		}
	}
}
