package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteDirs(t *testing.T) {
	o := func(i int) Origin { return Origin{Key: fmt.Sprintf("filesystem.allowWrite[%d]", i)} }
	p := &Policy{Filesystem: Filesystem{
		AllowWrite: []PathRule{
			{Path: MustParsePath("${HOME}/.npm/_logs"), Convenience: true, Origin: Default},
			{Path: MustParsePath("${HOME}/.npm"), Origin: o(0)},
			{Path: Cwd.Path(), Origin: o(1)},
			{Path: MustParsePath("${CWD}/out/logs"), Origin: o(2)},
			{Path: MustParsePath("/opt/cache"), Origin: o(3)},
			{Path: MustParsePath("${HOME}/../other"), Origin: o(4)},
			{Path: MustParsePath("${CWD}/.git/x"), Origin: o(5)},
			{Path: MustParsePath("${HOME}/.vscode/ext"), Origin: o(6)},
			{Path: MustParsePath("${HOME}/ro/sub"), Origin: o(7)},
			{Path: MustParsePath("${HOME}/.ssh/x"), Origin: o(8)},
			{Path: MustParsePath("${CWD}/build/*"), Pattern: true, Origin: o(9)},
			{Path: MustParsePath("${HOME}/gen/a"), Origin: o(10)},
			{Path: MustParsePath("${HOME}/.local/bin/tools"), Origin: o(11)},
			{Path: MustParsePath("${HOME}/.config/autostart"), Origin: o(12)},
		},
		DenyWrite: []PathRule{{Path: MustParsePath("${HOME}/ro"), Origin: Origin{Key: "filesystem.denyWrite[0]"}},
			{Path: MustParsePath("${HOME}/gen/*"), Pattern: true, Origin: Origin{Key: "filesystem.denyWrite[1]"}}},
		DenyRead: []PathRule{{Path: MustParsePath("${HOME}/.ssh"), Origin: Origin{Key: "filesystem.denyRead[0]"}},
			{Path: MustParsePath("/**/*.pem"), Pattern: true, Origin: Origin{Key: "filesystem.denyRead[1]"}}},
	}}
	type row struct {
		Key, Path, Root string
		Create          bool
		Why             string
	}
	var got []row
	for _, d := range WriteDirs(p, "/home/me", "/home/me/proj") {
		got = append(got, row{d.Rule.Origin.Key, d.Path, d.Root, d.Create, d.Why})
	}
	want := []row{
		{"filesystem.allowWrite[0]", "/home/me/.npm", "/home/me", true, ""},
		{"filesystem.allowWrite[1]", "/home/me/proj", "/home/me", true, ""},
		{"filesystem.allowWrite[2]", "/home/me/proj/out/logs", "/home/me/proj", true, ""},
		{"filesystem.allowWrite[3]", "/opt/cache", "", false, "srt creates only directories below the home and working directories"},
		{"filesystem.allowWrite[4]", "/home/other", "", false, "it is spelled with .."},
		{"filesystem.allowWrite[5]", "/home/me/proj/.git/x", "/home/me/proj", false, "its name is one srt protects (.git)"},
		{"filesystem.allowWrite[6]", "/home/me/.vscode/ext", "/home/me", false, "its name is one srt protects (.vscode)"},
		{"filesystem.allowWrite[7]", "/home/me/ro/sub", "/home/me", false, "a denyWrite entry (filesystem.denyWrite[0]) covers it"},
		{"filesystem.allowWrite[8]", "/home/me/.ssh/x", "/home/me", false, "a denyRead entry (filesystem.denyRead[0]) covers it"},
		{"filesystem.allowWrite[10]", "/home/me/gen/a", "/home/me", false, "a denyWrite entry (filesystem.denyWrite[1]) covers it"},
		{"filesystem.allowWrite[11]", "/home/me/.local/bin/tools", "/home/me", false, "programs there run outside the sandbox (/home/me/.local/bin); create it yourself if that is meant"},
		{"filesystem.allowWrite[12]", "/home/me/.config/autostart", "/home/me", false, "programs there run outside the sandbox (/home/me/.config/autostart); create it yourself if that is meant"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("WriteDirs (-want +got):\n%s", diff)
	}
	p.Filesystem.Disabled = true
	if d := WriteDirs(p, "/home/me", "/home/me/proj"); d != nil {
		t.Errorf("WriteDirs with the file-system policy off = %v", d)
	}
}

func TestCwdHidden(t *testing.T) {
	rule := func(p, key string) PathRule { return PathRule{Path: MustParsePath(p), Origin: Origin{Key: key}} }
	for _, tc := range []struct {
		name        string
		deny, allow []PathRule
		want        string
	}{
		{"nothing denied", nil, nil, ""},
		{"a deny elsewhere", []PathRule{rule("${HOME}/.ssh", "d0")}, nil, ""},
		{"a deny above", []PathRule{rule("${HOME}", "d0")}, nil, "d0"},
		{"the cwd itself", []PathRule{rule("${CWD}", "d0")}, nil, "d0"},
		{"opened again", []PathRule{rule("${HOME}", "d0")}, []PathRule{rule("${HOME}/proj", "a0")}, ""},
		{"opened above the deny", []PathRule{rule("${HOME}/proj", "d0")}, []PathRule{rule("${HOME}", "a0")}, "d0"},
		{"a deny below", []PathRule{rule("${CWD}/secret", "d0")}, nil, ""},
	} {
		p := &Policy{Filesystem: Filesystem{DenyRead: tc.deny, AllowRead: tc.allow}}
		d, ok := CwdHidden(p, "/home/me", "/home/me/proj")
		if got := map[bool]string{true: d.Origin.Key}[ok]; got != tc.want {
			t.Errorf("%s: CwdHidden = %q, %v; want %q", tc.name, d.Origin.Key, ok, tc.want)
		}
	}
}

// TestWriteDirsIndexAgrees compares WriteDirs, which asks only the deny
// rules its index finds, with a reading of every rule, on random
// policies: literal and pattern denies (wildcards at every depth, sets,
// braces, "..") under ${HOME}, ${CWD}, "/" and ${HOMEDRIVE}, and
// home and working directories with glob characters in their names.
func TestWriteDirsIndexAgrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "b", "src", ".git", "*", "**", "*.key", "[ab]", "x?", "{c}", "..", "[", "out", "logs"}
	spell := func(pattern bool) Path {
		// A root of the Windows reading stays unexpanded: a pattern
		// under it has no absolute base.
		root := []string{"${HOME}", "${CWD}", "", "${HOMEDRIVE}"}[rng.IntN(4)]
		s := root
		for range 1 + rng.IntN(4) {
			p := parts[rng.IntN(len(parts))]
			if !pattern {
				p = parts[rng.IntN(4)]
			}
			s += "/" + p
		}
		return MustParsePath(s)
	}
	for i := range 300 {
		fs := Filesystem{}
		for j := range 1 + rng.IntN(12) {
			fs.AllowWrite = append(fs.AllowWrite, PathRule{Path: spell(false), Origin: Origin{Key: fmt.Sprintf("filesystem.allowWrite[%d]", j)}})
		}
		for _, list := range []*[]PathRule{&fs.DenyWrite, &fs.DenyRead} {
			for j := range rng.IntN(20) {
				pat := rng.IntN(2) == 0
				*list = append(*list, PathRule{Path: spell(pat), Pattern: pat, Origin: Origin{Key: fmt.Sprintf("deny[%d]", j)}})
			}
		}
		p := &Policy{Filesystem: fs}
		home, cwd := []string{"/home/u", "/home/[u]", "/h{x}"}[i%3], []string{"/home/u/proj", "/work/p*q", "/home/u"}[i%3]
		got := WriteDirs(p, home, cwd)
		want := writeDirsLinear(p, home, cwd)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("policy %d (home %s, cwd %s): WriteDirs (-linear +indexed):\n%s\n%+v", i, home, cwd, d, fs)
		}
	}
}

// writeDirsLinear is WriteDirs asking every deny rule, in order.
func writeDirsLinear(p *Policy, home, cwd string) []WriteDir {
	fs := &p.Filesystem
	expand := expander(home, cwd)
	out := WriteDirs(&Policy{Filesystem: Filesystem{AllowWrite: fs.AllowWrite}}, home, cwd)
	for k, d := range out {
		if !d.Create {
			continue
		}
	rules:
		for _, rs := range []struct {
			list  []PathRule
			which string
		}{{fs.DenyWrite, "denyWrite"}, {fs.DenyRead, "denyRead"}} {
			for _, r := range rs.list {
				if covers(r, expand(r.Path), d.Path) {
					out[k].Why = "a " + rs.which + " entry (" + r.Origin.Key + ") covers it"
					out[k].Create = false
					break rules
				}
			}
		}
	}
	return out
}
