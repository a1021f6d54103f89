package policy

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
		// A relative spelling is resolved against the working directory:
		// "." and ".." fold lexically, up to the directory itself.
		{"./app/../conf/secret", false, "${CWD}/conf/secret", false},
		{"app/./x/../../conf", false, "${CWD}/conf", false},
		{"./a/../../x", false, "${CWD}/../x", false},
		{"../../x", false, "${CWD}/../../x", false},
		{"src/../*.pem", false, "${CWD}/*.pem", true},
		{"./a/..", false, "${CWD}", false},
		{"x/../y", true, "${CWD}/y", false},
		// Absolute and ~ spellings keep "..": only the host can fold it.
		{"/opt/a/../b", false, "/opt/a/../b", false},
		{"~/a/../b", false, "${HOME}/a/../b", false},
	}
	for _, tt := range tests {
		got, pattern := Normalize(tt.in, tt.literal)
		if got.String() != tt.want || pattern != tt.pattern {
			t.Errorf("Normalize(%q, literal=%v) = %q, %v; want %q, %v", tt.in, tt.literal, got, pattern, tt.want, tt.pattern)
		}
	}
}

func TestNormalizeTrailingSeparator(t *testing.T) {
	tests := []struct {
		in      string
		literal bool
		want    bool
	}{
		{"/data/in/*/", false, true},
		{"/data/**/", false, true},
		{"build/*/", false, true},
		{"~/x/[ab]/", false, true},
		{"/data/in/*", false, false},
		{"/data/in/", false, false},
		{"/x/keep[1]/", true, false},
	}
	for _, tt := range tests {
		if got := normalize(tt.in, tt.literal).trailing; got != tt.want {
			t.Errorf("normalize(%q, literal=%v).trailing = %v, want %v", tt.in, tt.literal, got, tt.want)
		}
	}
}
