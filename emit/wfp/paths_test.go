package wfp

import (
	"reflect"
	"testing"

	"srt.dev/compiler/policy"
)

func TestPaths(t *testing.T) {
	for _, tt := range []struct {
		in, win, slashes, parent string
		creatable                []string
	}{
		{"C:/p/new/dir", `C:\p\new\dir`, "C:/p/new/dir", "C:/p/new", []string{"C:/p", "C:/p/new"}},
		{"C:/x", `C:\x`, "C:/x", "C:/", nil},
		{"C:/", `C:\`, "C:/", "", nil},
		{"${HOME}/.ssh", `%USERPROFILE%\.ssh`, "%USERPROFILE%/.ssh", "${HOME}", nil},
		{"${HOME}/a/b", `%USERPROFILE%\a\b`, "%USERPROFILE%/a/b", "${HOME}/a", []string{"${HOME}/a"}},
		{"${HOME}", `%USERPROFILE%`, "%USERPROFILE%", "", nil},
		{"${CWD}/src", `%CD%\src`, "%CD%/src", "${CWD}", nil},
		{"${HOMEDRIVE}/x", `%HOMEDRIVE%\x`, "%HOMEDRIVE%/x", "${HOMEDRIVE}/", nil},
		{"${HOMEDRIVE}${HOMEPATH}/.aws", `%HOMEDRIVE%%HOMEPATH%\.aws`, "%HOMEDRIVE%%HOMEPATH%/.aws", "${HOMEDRIVE}${HOMEPATH}", nil},
		{"//srv/share/a/b", `\\srv\share\a\b`, "//srv/share/a/b", "//srv/share/a", []string{"//srv/share/a"}},
		{"//srv/share/f", `\\srv\share\f`, "//srv/share/f", "//srv/share", nil},
		{"//srv/share", `\\srv\share`, "//srv/share", "", nil},
		// A name that looks like a root is a name: only the root the
		// path starts with is respelled.
		{"${CWD}/${HOME}/x", `%CD%\${HOME}\x`, "%CD%/${HOME}/x", "${CWD}/${HOME}", []string{"${CWD}/${HOME}"}},
		{"${HOMEDRIVE}/a/${CWD}", `%HOMEDRIVE%\a\${CWD}`, "%HOMEDRIVE%/a/${CWD}", "${HOMEDRIVE}/a", []string{"${HOMEDRIVE}/a"}},
	} {
		in := policy.MustParsePath(tt.in)
		if got := win(in); got != tt.win {
			t.Errorf("win(%q) = %q, want %q", tt.in, got, tt.win)
		}
		if got := slashes(in); got != tt.slashes {
			t.Errorf("slashes(%q) = %q, want %q", tt.in, got, tt.slashes)
		}
		if got, ok := parent(in); got.String() != tt.parent || ok != (tt.parent != "") {
			t.Errorf("parent(%q) = %q, %v; want %q", tt.in, got, ok, tt.parent)
		}
		var got []string
		for _, a := range creatable(in) {
			got = append(got, a.String())
		}
		if !reflect.DeepEqual(got, tt.creatable) {
			t.Errorf("creatable(%q) = %q, want %q", tt.in, got, tt.creatable)
		}
	}
}

func TestUnder(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"C:/p", "C:/P", true}, // spec W9: names compare ignoring case
		{"C:/p/vendor/x", "C:/p/vendor", true},
		{"C:/p/vendorx", "C:/p/vendor", false},
		{"C:/p", "C:/p/vendor", false},
		{"C:/x", "C:/", true},
		{"D:/x", "C:/", false},
		{"${HOME}/.aws/cfg", "${HOME}/.AWS", true},
		{"${CWD}/${HOME}x", "${CWD}/${HOME}", false},
		{"${HOMEDRIVE}${HOMEPATH}/x", "${HOMEDRIVE}/", false}, // a fact of the host
		{"C:/Users/me/.ssh", "${HOME}", false},                // a fact of the host
		{"//srv/share/a", "//SRV/share", true},
	} {
		a, b := policy.MustParsePath(tt.a), policy.MustParsePath(tt.b)
		if got := under(a, b); got != tt.want {
			t.Errorf("under(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestStaticPrefix(t *testing.T) {
	for _, tt := range []struct {
		r    policy.PathRule
		want string
	}{
		{policy.PathRule{Path: policy.MustParsePath("C:/proj/**/*.pem"), Pattern: true}, "C:/proj"},
		{policy.PathRule{Path: policy.MustParsePath("C:/out-*"), Pattern: true}, "C:/"},
		{policy.PathRule{Path: policy.MustParsePath("${HOMEDRIVE}/*.pem"), Pattern: true}, "${HOMEDRIVE}/"},
		{policy.PathRule{Path: policy.MustParsePath("${HOME}/*.pem"), Pattern: true}, "${HOME}"},
		{policy.PathRule{Path: policy.MustParsePath("${HOME}/a/b?/c"), Pattern: true}, "${HOME}/a"},
		{policy.PathRule{Path: policy.MustParsePath("C:/app/[prod].env")}, "C:/app/[prod].env"},
	} {
		if got := staticPrefix(tt.r); got.String() != tt.want {
			t.Errorf("staticPrefix(%q) = %q, want %q", tt.r.Path, got, tt.want)
		}
	}
}
