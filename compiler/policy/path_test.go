package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// The expected answers below are written from the rules of the Path type
// (path.go's doc comments), by hand, never computed by the code under
// test.

func TestParsePath(t *testing.T) {
	for _, tt := range []struct {
		in   string
		root Root
		rel  string
	}{
		{"/", Abs, ""},
		{"/etc/x", Abs, "etc/x"},
		{"${HOME}", Home, ""},
		{"${HOME}/.ssh", Home, ".ssh"},
		{"${CWD}", Cwd, ""},
		{"${CWD}/src/gen", Cwd, "src/gen"},
		// ".." stays, as Normalize leaves it.
		{"${CWD}/../x", Cwd, "../x"},
		{"/opt/a/../b", Abs, "opt/a/../b"},
		// A marker below the root is a name (Normalize("a/${HOME}")).
		{"${CWD}/${HOME}/x", Cwd, "${HOME}/x"},
		{"${CWD}/a/${CWD}", Cwd, "a/${CWD}"},
		// Glob characters are characters; a literal entry keeps "**".
		{"${HOME}/.config/*.json", Home, ".config/*.json"},
		{"/x/**", Abs, "x/**"},
		{"/w/[WIP] x/é/a\\b", Abs, "w/[WIP] x/é/a\\b"},
		// The Windows reading's roots.
		{"C:/", "C:", ""},
		{"C:/p/x", "C:", "p/x"},
		{"//srv/share", UNC, "srv/share"},
		{"//srv/share/f", UNC, "srv/share/f"},
		{"${HOMEDRIVE}/", HomeDrive, ""},
		{"${HOMEDRIVE}/x", HomeDrive, "x"},
		{"${HOMEDRIVE}${HOMEPATH}", HomeDrivePath, ""},
		{"${HOMEDRIVE}${HOMEPATH}/.aws", HomeDrivePath, ".aws"},
	} {
		p, err := ParsePath(tt.in)
		if err != nil || p.Root() != tt.root || p.Rel() != tt.rel {
			t.Errorf("ParsePath(%q) = %q, %q, %v; want %q, %q", tt.in, p.Root(), p.Rel(), err, tt.root, tt.rel)
			continue
		}
		if got := p.String(); got != tt.in {
			t.Errorf("ParsePath(%q).String() = %q, want it back", tt.in, got)
		}
		b, err := p.MarshalText()
		if err != nil || string(b) != tt.in {
			t.Errorf("ParsePath(%q).MarshalText() = %q, %v; want it back", tt.in, b, err)
		}
	}
}

func TestParsePathRefuses(t *testing.T) {
	for _, tt := range []struct{ in, err string }{
		{"", "empty policy path"},
		{"x", "starts at no root"},
		{"./x", "starts at no root"},
		{"~/x", "starts at no root"},
		{"${FOO}/x", "starts at no root"},
		{"${HOMEPATH}/x", "starts at no root"}, // %HOMEPATH% alone names no directory
		{"c:/x", "starts at no root"},          // a drive letter is upper case
		{"C:", `the root C: is written with "/" after it`},
		{"C:x", "must be followed by"},
		{"${HOMEDRIVE}", `the root ${HOMEDRIVE} is written with "/" after it`},
		{"${HOME}x", "must be followed by"},
		{"${HOME}${CWD}", "must be followed by"},
		{"${HOMEDRIVE}${HOMEPATH}x", "must be followed by"},
		{"${HOME}/", `ends in "/"`},
		{"${CWD}/", `ends in "/"`},
		{"${HOMEDRIVE}${HOMEPATH}/", `ends in "/"`},
		{"/etc/", "an empty element"},
		{"/etc//x", "an empty element"},
		{"${HOME}//x", "an empty element"},
		{"/etc/./x", `a "." element`},
		{"/.", `a "." element`},
		{"${CWD}/.", `a "." element`},
		{"//", "a UNC path names a server and a share"},
		{"//srv", "a UNC path names a server and a share"},
		{"///x", "an empty element"},
	} {
		p, err := ParsePath(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ParsePath(%q) = %q, %v; want an error containing %q", tt.in, p, err, tt.err)
		}
		var q Path
		if err := q.UnmarshalText([]byte(tt.in)); err == nil || !q.IsZero() {
			t.Errorf("UnmarshalText(%q) = %v, left %q; want an error and no path", tt.in, err, q)
		}
	}
}

func TestCleanPath(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{"/etc//./x/", "/etc/x", ""},
		{"C://X", "C:/X", ""},
		{"${HOME}/", "${HOME}", ""},
		{"${HOME}/./a/../b", "${HOME}/a/../b", ""}, // ".." stays
		{"//srv//share/", "//srv/share", ""},
		{"/", "/", ""},
		{"//srv", "", "a UNC path names a server and a share"},
		{"${HOME}x", "", "must be followed by"},
		{"x/y", "", "starts at no root"},
		{"C:", "", "is written with"}, // the current directory of drive C: no guess
	} {
		p, err := CleanPath(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("CleanPath(%q) = %q, %v; want an error containing %q", tt.in, p, err, tt.err)
		case tt.err == "" && (err != nil || p.String() != tt.want):
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, p, err, tt.want)
		}
	}
}

func TestPathZero(t *testing.T) {
	var p Path
	if !p.IsZero() || p.String() != "" {
		t.Errorf("zero Path: IsZero %v, String %q", p.IsZero(), p.String())
	}
	if _, err := p.MarshalText(); err == nil {
		t.Error("MarshalText of the zero Path succeeded")
	}
	if _, ok := p.Expand("/h", "/w"); ok {
		t.Error("Expand of the zero Path succeeded")
	}
	if p.Contains(p) || p.Contains(MustParsePath("/")) {
		t.Error("the zero Path contains something")
	}
}

func TestPathJSON(t *testing.T) {
	r := PathRule{Path: MustParsePath("${HOME}/.ssh"), Origin: Origin{Key: "filesystem.denyRead[0]"}}
	b, err := json.Marshal(r)
	if want := `{"path":"${HOME}/.ssh","origin":{"key":"filesystem.denyRead[0]"}}`; err != nil || string(b) != want {
		t.Fatalf("json.Marshal = %s, %v; want %s", b, err, want)
	}
	var back PathRule
	if err := json.Unmarshal(b, &back); err != nil || back.Path != r.Path {
		t.Fatalf("json.Unmarshal(%s) = %+v, %v; want %q", b, back, err, r.Path)
	}
	if _, err := json.Marshal(PathRule{}); err == nil {
		t.Error("json.Marshal of a rule with the zero Path succeeded")
	}
	if err := json.Unmarshal([]byte(`{"path":"home/.ssh"}`), &back); err == nil || !strings.Contains(err.Error(), `policy path "home/.ssh" starts at no root`) {
		t.Errorf("json.Unmarshal of a relative path = %v, want it refused", err)
	}
}

func TestExpand(t *testing.T) {
	for _, tt := range []struct {
		p, home, cwd string
		want         string
		ok           bool
	}{
		// A root that is no host fact needs no directory.
		{"/etc/x", "", "", "/etc/x", true},
		{"/", "", "", "/", true},
		{"C:/x", "", "", "C:/x", true},
		{"//srv/share/x", "", "", "//srv/share/x", true},
		{"${HOME}/.ssh", "/home/me", "", "/home/me/.ssh", true},
		{"${HOME}", "/home/me", "", "/home/me", true},
		{"${CWD}/src", "", "/w/p", "/w/p/src", true},
		{"${CWD}", "/home/me", "/w/p", "/w/p", true},
		// An unknown directory is said, never guessed ("/.ssh").
		{"${HOME}/.ssh", "", "/w/p", "", false},
		{"${CWD}", "/home/me", "", "", false},
		// One trailing "/" of the directory goes; a root stays a root.
		{"${HOME}/x", "/home/me/", "", "/home/me/x", true},
		{"${HOME}", "/home/me/", "", "/home/me", true},
		{"${HOME}/x", "/", "", "/x", true},
		{"${HOME}", "/", "", "/", true},
		{"${CWD}", "", "C:/", "C:/", true},
		{"${CWD}/x", "", "C:/", "C:/x", true},
		// ".." is kept, for the caller to fold or not.
		{"${CWD}/../x", "", "/w/p", "/w/p/../x", true},
		// The Windows roots come from a home with a drive letter.
		{"${HOMEDRIVE}/x", "C:/Users/me", "", "C:/x", true},
		{"${HOMEDRIVE}/", "C:/Users/me", "", "C:/", true},
		{"${HOMEDRIVE}${HOMEPATH}/.aws", "C:/Users/me", "", "C:/Users/me/.aws", true},
		{"${HOMEDRIVE}${HOMEPATH}", "C:/Users/me", "", "C:/Users/me", true},
		{"${HOMEDRIVE}/x", "/home/me", "", "", false},
		{"${HOMEDRIVE}${HOMEPATH}/x", "", "C:/w", "", false},
	} {
		got, ok := MustParsePath(tt.p).Expand(tt.home, tt.cwd)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s.Expand(%q, %q) = %q, %v; want %q, %v", tt.p, tt.home, tt.cwd, got, ok, tt.want, tt.ok)
		}
	}
}

func TestContains(t *testing.T) {
	for _, tt := range []struct {
		p, q string
		want bool
	}{
		{"${HOME}", "${HOME}", true},
		{"${HOME}", "${HOME}/x", true},
		{"${HOME}/x", "${HOME}", false},
		{"${HOME}/.ssh", "${HOME}/.sshx", false},
		{"${HOME}/.ssh", "${HOME}/.ssh/id", true},
		// A name that starts like another is not below it.
		{"${CWD}/${HOME}", "${CWD}/${HOME}x", false},
		{"${CWD}/${HOME}", "${CWD}/${HOME}/x", true},
		// "/" holds every absolute path, and no symbolic one: where
		// ${HOME} lies is a fact of the host.
		{"/", "/", true},
		{"/", "/etc/x", true},
		{"/", "${HOME}", false},
		{"/", "${HOME}/x", false},
		{"/home", "${HOME}", false},
		{"${HOME}", "/home/me", false},
		{"${HOME}", "${CWD}", false},
		// ".." is an element like any other.
		{"${CWD}", "${CWD}/../x", true},
		{"${CWD}/a", "${CWD}/a/../b", true},
		{"${CWD}/b", "${CWD}/a/../b", false},
		// The Windows roots: by spelling, case and all.
		{"C:/", "C:/x", true},
		{"C:/", "D:/x", false},
		{"C:/x", "C:/X", false},
		{"//srv/share", "//srv/share/f", true},
		{"//srv/share", "//srv/shared", false},
		{"${HOMEDRIVE}/", "${HOMEDRIVE}/x", true},
		{"${HOMEDRIVE}/", "${HOMEDRIVE}${HOMEPATH}/x", false},
		{"/", "C:/x", false},
	} {
		p, q := MustParsePath(tt.p), MustParsePath(tt.q)
		if got := p.Contains(q); got != tt.want {
			t.Errorf("%s.Contains(%s) = %v, want %v", tt.p, tt.q, got, tt.want)
		}
		if got := q.Under(p); got != tt.want {
			t.Errorf("%s.Under(%s) = %v, want %v", tt.q, tt.p, got, tt.want)
		}
	}
}

func TestJoinAndParent(t *testing.T) {
	for _, tt := range []struct{ p, elem, want string }{
		{"${HOME}", ".ssh", "${HOME}/.ssh"},
		{"${HOME}/.config", "git/config", "${HOME}/.config/git/config"},
		{"${CWD}", "", "${CWD}"},
		{"/", "etc", "/etc"},
		{"C:/", "x", "C:/x"},
		{"${HOMEDRIVE}/", "x", "${HOMEDRIVE}/x"},
		{"${CWD}", "..", "${CWD}/.."},
	} {
		if got := MustParsePath(tt.p).Join(tt.elem); got.String() != tt.want {
			t.Errorf("%s.Join(%q) = %q, want %q", tt.p, tt.elem, got, tt.want)
		}
	}
	if got := Home.Join(".npm/_logs").String(); got != "${HOME}/.npm/_logs" {
		t.Errorf(`Home.Join(".npm/_logs") = %q`, got)
	}
	for _, elem := range []string{"/x", "x/", "a//b", ".", "a/./b"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Join(%q) did not panic", elem)
				}
			}()
			Home.Join(elem)
		}()
	}
	for _, tt := range []struct{ p, want string }{
		{"${HOME}/a/b", "${HOME}/a"},
		{"${HOME}/a", "${HOME}"},
		{"/etc", "/"},
		{"C:/x", "C:/"},
		{"${HOMEDRIVE}/x", "${HOMEDRIVE}/"},
		{"//srv/share/f", "//srv/share"},
		{"${CWD}/a/..", "${CWD}/a"}, // a name, not folded
		{"${HOME}", ""},
		{"/", ""},
		{"C:/", ""},
	} {
		got, ok := MustParsePath(tt.p).Parent()
		if got.String() != tt.want || ok != (tt.want != "") {
			t.Errorf("%s.Parent() = %q, %v; want %q", tt.p, got, ok, tt.want)
		}
	}
}

func TestWithin(t *testing.T) {
	for _, tt := range []struct {
		root      Root
		dir, p    string
		want      string
		wantFound bool
	}{
		{Home, "/home/me", "/home/me/.ssh", "${HOME}/.ssh", true},
		{Home, "/home/me", "/home/me", "${HOME}", true},
		{Home, "/home/me", "/home/mex", "", false},
		{Home, "/home/me", "/etc", "", false},
		{Home, "/", "/x/y", "${HOME}/x/y", true},
		{Home, "/", "/", "${HOME}", true},
		{Cwd, "C:/", "C:/p", "${CWD}/p", true},
		{Cwd, "${CWD}", "${CWD}/a", "${CWD}/a", true}, // a symbolic directory, as the evaluator keeps one it does not know
		{Cwd, "/w", "/w//a", "", false},               // not clean
		{Cwd, "", "/w", "", false},
	} {
		got, ok := tt.root.Within(tt.dir, tt.p)
		if got.String() != tt.want || ok != tt.wantFound {
			t.Errorf("%s.Within(%q, %q) = %q, %v; want %q, %v", tt.root, tt.dir, tt.p, got, ok, tt.want, tt.wantFound)
		}
	}
}

func TestSpell(t *testing.T) {
	for _, tt := range []struct{ p, root, want string }{
		{"${HOME}/.ssh", "%USERPROFILE%", "%USERPROFILE%/.ssh"},
		{"${HOME}", "%USERPROFILE%", "%USERPROFILE%"},
		{"${CWD}/${HOME}/x", "%CD%", "%CD%/${HOME}/x"}, // only the root
		{"${HOMEDRIVE}/", "%HOMEDRIVE%", "%HOMEDRIVE%/"},
		{"${HOMEDRIVE}${HOMEPATH}/.aws", "%HOMEDRIVE%%HOMEPATH%", "%HOMEDRIVE%%HOMEPATH%/.aws"},
		{"/etc/x", "", "/etc/x"},
	} {
		if got := MustParsePath(tt.p).Spell(tt.root); got != tt.want {
			t.Errorf("%s.Spell(%q) = %q, want %q", tt.p, tt.root, got, tt.want)
		}
	}
}

func TestCovers(t *testing.T) {
	for _, tt := range []struct {
		rule    string
		pattern bool
		p       string
		want    bool
	}{
		{"${HOME}/.ssh", false, "${HOME}/.ssh", true},
		{"${HOME}/.ssh", false, "${HOME}/.ssh/id_rsa", true},
		{"${HOME}/.ssh", false, "${HOME}/.sshx", false},
		{"${HOME}/.ssh", false, "/home/me/.ssh", false}, // a fact of the host
		// "/" covers everything, the symbolic roots too (they are
		// absolute on every host).
		{"/", false, "${HOME}/x", true},
		{"/", false, "/etc", true},
		{"/etc", false, "${CWD}/etc", false},
		{"C:/", false, "C:/x", true},
		{"${HOMEDRIVE}/", false, "${HOMEDRIVE}/x", true},
		// A pattern matches the path or an ancestor.
		{"${HOME}/*.key", true, "${HOME}/a.key", true},
		{"${HOME}/*.key", true, "${HOME}/a.key/x", true},
		{"${HOME}/*.key", true, "${HOME}/d/a.key", false},
		{"${CWD}/**/.env", true, "${CWD}/.env", true},
		{"${CWD}/**/.env", true, "${CWD}/a/b/.env", true},
		{"${CWD}/**/.env", true, "${HOME}/.env", false},
		// Its text is a name too.
		{"/w/[WIP]", true, "/w/[WIP]/x", true},
		{"/w/[WIP]", true, "/w/W", true},
		// The root of a volume is no ancestor a pattern can match.
		{"/*", true, "/", false},
		{"/*", true, "/etc/x", true},
	} {
		r := PathRule{Path: MustParsePath(tt.rule), Pattern: tt.pattern}
		if got := r.Covers(MustParsePath(tt.p)); got != tt.want {
			t.Errorf("PathRule{%s, pattern %v}.Covers(%s) = %v, want %v", tt.rule, tt.pattern, tt.p, got, tt.want)
		}
	}
}

// TestNormalizeParses: whatever Normalize makes of a spelling, ParsePath
// reads back from its text, to the same path (plan.json round-trips).
func TestNormalizeParses(t *testing.T) {
	parts := []string{"/", "//", "~", "~/", ".", "..", "a", "${HOME}", "${CWD}", "**", "*.key", "[x]", "é", " ", `\`, "C:", "%USERPROFILE%"}
	seed := uint32(7)
	next := func(n int) int { seed = seed*1664525 + 1013904223; return int(seed>>8) % n }
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for j := next(6); j > 0; j-- {
			b.WriteString(parts[next(len(parts))])
		}
		in, literal := b.String(), next(2) == 0
		p, _ := Normalize(in, literal)
		back, err := ParsePath(p.String())
		if err != nil || back != p {
			t.Fatalf("Normalize(%q, literal=%v) = %q, which ParsePath reads as %q, %v", in, literal, p, back, err)
		}
	}
}
