//go:build linux

package quarantine

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

func write(t testing.TB, p, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, p string) {
	t.Helper()
	testenv.MkdirAll(t, filepath.Dir(p), 0o755)
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

// run snapshots root, lets change write the tree as a command would, and
// checks it: the findings, relative to root, sorted.
func run(t testing.TB, spec Spec, change func()) ([]string, []Finding, []string) {
	t.Helper()
	start, notes := Snap(spec, nil, DefaultLimits)
	if len(notes) != 0 {
		t.Logf("Snap notes: %q", notes)
	}
	change()
	done := make(chan struct{})
	var found []Finding
	go func() {
		rep := Check(spec, start, DefaultLimits)
		found, notes = rep.Found, rep.Unchecked
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("Check did not return")
	}
	var rel []string
	for _, f := range found {
		r, _ := filepath.Rel(spec.Roots[0], f.Path())
		rel = append(rel, r)
	}
	sort.Strings(rel)
	return rel, found, notes
}

func same(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

// TestCheck: what the command wrote is found, what was there before and
// did not change is not, nor are empty files, hook samples and a fresh
// git init configuration.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git/hooks/pre-commit"), "old")
	write(t, filepath.Join(root, ".git/config"), "[core]\n\tfsmonitor = /old\n") // the user's own
	write(t, filepath.Join(root, ".vscode/old.json"), "{}")
	write(t, filepath.Join(root, "deep/a/b/c/.bashrc"), "old")
	write(t, filepath.Join(root, "deep/a/b/c/.profile"), "old")
	got, _, notes := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		for p, text := range map[string]string{
			".git/hooks/post-commit":        "new",
			".git/hooks/pre-push.sample":    "sample",
			"a/.bashrc":                     "evil",
			"a/.profile":                    "",
			"a/.vscode/settings.json":       "{}",
			"b/.git/config":                 "[core]\n\tfsmonitor = /x\n",
			"b/.git/HEAD":                   "ref: refs/heads/main\n",
			"b/.git/commondir":              "/x",
			"c/.git":                        "gitdir: /x",
			"fresh/.git/config":             "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
			"fresh/.git/hooks/x.sample":     "sample",
			"bare/HEAD":                     "ref: refs/heads/main\n",
			"bare/config":                   "[core]\n\tpager = /x\n",
			"bare/objects/x":                "",
			"bare/refs/heads/x":             "",
			"d/.git/modules/m/HEAD":         "ref: refs/heads/main\n",
			"d/.git/modules/m/objects/x":    "",
			"d/.git/modules/m/refs/x":       "",
			"d/.git/modules/m/hooks/update": "x",
			"node_modules/p/.bashrc":        "evil",
			"deep/a/b/c/.profile":           "changed",
			"plain.txt":                     "data",
			".claude/commands/x.md":         "run",
			".claude/other/x.md":            "fine",
		} {
			write(t, filepath.Join(root, p), text)
		}
	})
	want := []string{".claude/commands/x.md", ".git/hooks/post-commit", "a/.bashrc", "a/.vscode/settings.json", "b/.git/commondir", "b/.git/config", "bare/config", "c/.git", "d/.git/modules/m/hooks/update", "deep/a/b/c/.profile", "node_modules/p/.bashrc"}
	if !same(got, want) || len(notes) != 0 {
		t.Fatalf("Check = %q, notes %q\nwant %q", got, notes, want)
	}
}

// TestCheckAllowGitConfig: under allowGitConfig, configurations are the
// command's to write; hooks and commondir are not.
func TestCheckAllowGitConfig(t *testing.T) {
	root := t.TempDir()
	got, _, _ := run(t, Spec{Roots: []string{root}, GitConfig: false}, func() {
		write(t, filepath.Join(root, "b/.git/config"), "[core]\n\tfsmonitor = /x\n")
		write(t, filepath.Join(root, "b/.git/commondir"), "/x")
	})
	if !same(got, []string{"b/.git/commondir"}) {
		t.Errorf("with allowGitConfig, Check = %q; want only the commondir", got)
	}
}

// TestCheckRenamedIntoPlace: a directory written earlier (its files old)
// and renamed into place as .git during the run is new, whatever the
// timestamps of its files say.
func TestCheckRenamedIntoPlace(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "stash/config"), "[core]\n\tfsmonitor = /x\n")
	write(t, filepath.Join(root, "stash/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, "stash/hooks/pre-commit"), "#!/bin/sh\n")
	got, _, _ := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		if err := os.Rename(filepath.Join(root, "stash"), filepath.Join(root, ".git")); err != nil {
			t.Fatal(err)
		}
	})
	if want := []string{".git/config", ".git/hooks/pre-commit"}; !same(got, want) {
		t.Fatalf("Check = %q, want %q", got, want)
	}
}

// TestCheckBareInRepository: in an existing repository, HEAD, objects and
// refs planted beside .git (as links into it) make git take the project
// for a bare repository: the HEAD that does it goes, and so does its
// configuration.
func TestCheckBareInRepository(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".git/config"), "[core]\n\tbare = false\n")
	testenv.MkdirAll(t, filepath.Join(root, ".git/objects"), 0o755)
	testenv.MkdirAll(t, filepath.Join(root, ".git/refs"), 0o755)
	got, _, _ := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		write(t, filepath.Join(root, ".git/HEAD"), "invalid")
		write(t, filepath.Join(root, "HEAD"), "ref: refs/heads/main\n")
		symlink(t, ".git/objects", filepath.Join(root, "objects"))
		symlink(t, ".git/refs", filepath.Join(root, "refs"))
		write(t, filepath.Join(root, "config"), "[core]\n\tfsmonitor = /x\n")
	})
	if want := []string{"HEAD"}; !same(got, want) {
		t.Fatalf("Check = %q, want %q", got, want)
	}
}

// TestCheckCommondirShape: a HEAD the project already had and a
// commondir written during the run make a git directory of the project;
// the check moves the commondir, and with it that shape, so it judges
// what the move leaves: the object store is entered (a .git planted
// there is found) and every name below hooks is protected, samples too.
// A commondir the directory had at the start keeps the object store
// git's data.
func TestCheckCommondirShape(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, "objects/pack/p.pack"), "")
	write(t, filepath.Join(root, "kept/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, "kept/commondir"), "../..\n")
	got, _, notes := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		write(t, filepath.Join(root, "commondir"), "/x")
		write(t, filepath.Join(root, "objects/.git"), "gitdir: /x")
		write(t, filepath.Join(root, "objects/.vscode/tasks.json"), "{}")
		write(t, filepath.Join(root, "hooks/.vscode/x.sample"), "{}")
		write(t, filepath.Join(root, "kept/objects/.git"), "gitdir: /x")
		write(t, filepath.Join(root, "kept/hooks/x.sample"), "sample")
	})
	want := []string{"commondir", "hooks/.vscode/x.sample", "objects/.git", "objects/.vscode/tasks.json"}
	if !same(got, want) || len(notes) != 0 {
		t.Fatalf("Check = %q, notes %q\nwant %q", got, notes, want)
	}
}

// TestCheckLinks: links are never followed: not in the tree (a link to a
// directory outside the roots, a loop), not to a hooks directory named
// through "..", and a protected name that is a link is found as a link.
func TestCheckLinks(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "project"), filepath.Join(base, "elsewhere")
	write(t, filepath.Join(outside, "precious"), "keep")
	write(t, filepath.Join(outside, "commands/x.md"), "keep")
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".git/config"), "[core]\n\thooksPath = "+root+"/../elsewhere\n")
	spec := Spec{Roots: []string{root}, GitConfig: true}
	got, _, _ := run(t, spec, func() {
		symlink(t, outside, filepath.Join(root, ".claude"))
		symlink(t, outside, filepath.Join(root, "sub/.git/modules"))
		write(t, filepath.Join(root, "sub/.git/HEAD"), "ref: refs/heads/main\n")
		symlink(t, "loop", filepath.Join(root, "loop"))
		symlink(t, ".", filepath.Join(root, "self"))
		symlink(t, "/dev/zero", filepath.Join(root, "zero/.git/config"))
		write(t, filepath.Join(root, "zero/.git/HEAD"), "ref: refs/heads/main\n")
	})
	want := []string{".claude", "zero/.git/config"}
	if !same(got, want) {
		t.Fatalf("Check = %q, want %q", got, want)
	}
	for _, p := range []string{"precious", "commands/x.md"} {
		if b, err := os.ReadFile(filepath.Join(outside, p)); err != nil || string(b) != "keep" {
			t.Errorf("%s outside the root: %q, %v", p, b, err)
		}
	}
}

// TestCheckFIFO: a FIFO in place of a configuration or a hook neither
// blocks the check nor is read; it is found.
func TestCheckFIFO(t *testing.T) {
	root := t.TempDir()
	got, _, _ := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
		for _, p := range []string{".git/config", ".git/hooks/pre-commit", ".bashrc"} {
			testenv.MkdirAll(t, filepath.Dir(filepath.Join(root, p)), 0o755)
			if err := syscall.Mkfifo(filepath.Join(root, p), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
	if want := []string{".bashrc", ".git/config", ".git/hooks/pre-commit"}; !same(got, want) {
		t.Fatalf("Check = %q, want %q", got, want)
	}
}

// TestCheckConfigComment: a comment line ending in a backslash does not
// hide the next line: git reads it, and the configuration goes.
func TestCheckConfigComment(t *testing.T) {
	root := t.TempDir()
	got, _, _ := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		write(t, filepath.Join(root, "r/.git/HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(root, "r/.git/config"), "[core]\n\tbare = false\n# note \\\n\tfsmonitor = /x\n")
	})
	if want := []string{"r/.git/config"}; !same(got, want) {
		t.Fatalf("Check = %q, want %q", got, want)
	}
}

// TestCheckConfigKeyShown: the reason a configuration is quarantined
// names the variable it sets, which the command chose: a subsection with
// a tab and a right-to-left override (both in git's plain form) is shown
// Go-quoted, an ordinary variable as it is.
func TestCheckConfigKeyShown(t *testing.T) {
	root := t.TempDir()
	_, found, _ := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		write(t, filepath.Join(root, "r/.git/HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(root, "r/.git/config"), "[remote \"a\u202eb\tc\"]\n\tproxy = x\n")
		write(t, filepath.Join(root, "s/.git/HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(root, "s/.git/config"), "[core]\n\tfsmonitor = /x\n")
	})
	var whys []string
	for _, f := range found {
		whys = append(whys, f.Why)
	}
	sort.Strings(whys)
	want := []string{`a git configuration that sets "remote.a\u202eb\tc.proxy"`, "a git configuration that sets core.fsmonitor"}
	if !same(whys, want) {
		t.Errorf("reasons %q, want %q", whys, want)
	}
}

// TestCheckSameTick: a protected file rewritten within one tick of the
// file system's clock, so that its size and times look unchanged, is
// found by its content.
func TestCheckSameTick(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".bashrc")
	write(t, p, "echo old")
	spec := Spec{Roots: []string{root}, GitConfig: true}
	start, _ := Snap(spec, nil, DefaultLimits)
	write(t, p, "echo new")
	// As if the rewrite had kept every time and the size: the start
	// saw what the end sees, but for the content.
	end := Check(spec, start, DefaultLimits).End
	start.Roots[0].Dir.leaves[".bashrc"].id = end.Roots[0].Dir.leaves[".bashrc"].id
	start.Roots[0].Dir.id = end.Roots[0].Dir.id
	found := Check(spec, start, DefaultLimits).Found
	if len(found) != 1 || found[0].Path() != p {
		t.Fatalf("Check = %v; want %s", found, p)
	}
	// And an old file (times outside the tick) with the same identity is
	// trusted without reading.
	start.Taken += int64(time.Hour)
	found = Check(spec, start, DefaultLimits).Found
	if len(found) != 0 {
		t.Fatalf("Check with an old snapshot = %v; want nothing", found)
	}
}

// TestCheckDepth: a directory written during the run too deep to walk is
// quarantined whole; the walk does not go on.
func TestCheckDepth(t *testing.T) {
	root := t.TempDir()
	got, _, _ := run(t, Spec{Roots: []string{root}, GitConfig: true}, func() {
		p := root
		for i := 0; i < MaxDepth+5; i++ {
			p = filepath.Join(p, "d")
		}
		write(t, filepath.Join(p, ".bashrc"), "evil")
	})
	if len(got) != 1 || strings.Count(got[0], "d") != MaxDepth+1 {
		t.Fatalf("Check = %q; want the directory at depth %d", got, MaxDepth+1)
	}
}

// TestCheckCached: a snapshot taken with an earlier one as its cache
// records the same, and the check after it finds the same.
func TestCheckCached(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".git/config"), "[core]\n\thooksPath = .husky\n")
	write(t, filepath.Join(root, ".husky/pre-commit"), "old")
	write(t, filepath.Join(root, "a/b/.bashrc"), "old")
	spec := Spec{Roots: []string{root}, GitConfig: true}
	first, _ := Snap(spec, nil, DefaultLimits)
	if first.Hooks[filepath.Join(root, ".husky")] == "" {
		t.Fatalf("hooks = %v: .husky missing", first.Hooks)
	}
	first.Taken += int64(time.Hour) // everything is old to the cache
	cached, _ := Snap(spec, first, DefaultLimits)
	write(t, filepath.Join(root, ".husky/pre-push"), "new")
	write(t, filepath.Join(root, "a/b/.bashrc"), "changed")
	found := Check(spec, cached, DefaultLimits).Found
	var got []string
	for _, f := range found {
		got = append(got, strings.TrimPrefix(f.Path(), root+"/"))
	}
	sort.Strings(got)
	if want := []string{".husky/pre-push", "a/b/.bashrc"}; !same(got, want) {
		t.Fatalf("Check after a cached snapshot = %q, want %q", got, want)
	}
}

// TestSnapshotFile: a snapshot read back is the one written.
func TestSnapshotFile(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git/hooks/pre-commit"), "x")
	write(t, filepath.Join(root, "a/.bashrc"), "x")
	symlink(t, "target", filepath.Join(root, ".vscode"))
	spec := Spec{Roots: []string{root}, GitConfig: true}
	s, _ := Snap(spec, nil, DefaultLimits)
	f := filepath.Join(t.TempDir(), "snap")
	if err := s.WriteFile(f); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSnapshot(f)
	if err != nil {
		t.Fatal(err)
	}
	f2 := f + "2"
	if err := back.WriteFile(f2); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(f2)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatal("a snapshot read back and written again differs")
	}
	write(t, filepath.Join(root, "a/.bashrc"), "changed")
	if found := Check(spec, back, DefaultLimits).Found; len(found) != 1 {
		t.Fatalf("Check against the snapshot read back = %v", found)
	}
	testenv.WriteFile(t, f, a[:len(a)/2], 0o600)
	if _, err := ReadSnapshot(f); err == nil {
		t.Fatal("a snapshot cut in half was read")
	}
}

// genTree makes a project of n empty files: a node_modules of n/50
// directories of 50 files each, a repository's .git, a few protected
// names.
func genTree(tb testing.TB, root string, n int) {
	tb.Helper()
	write(tb, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(tb, filepath.Join(root, ".git/config"), "[core]\n\tbare = false\n")
	write(tb, filepath.Join(root, ".git/hooks/pre-commit.sample"), "x")
	testenv.MkdirAll(tb, filepath.Join(root, ".git/objects"), 0o755)
	testenv.MkdirAll(tb, filepath.Join(root, ".git/refs"), 0o755)
	write(tb, filepath.Join(root, ".vscode/settings.json"), "{}")
	for d := 0; d < n/50; d++ {
		dir := filepath.Join(root, "node_modules", "p"+strconv.Itoa(d/40), "d"+strconv.Itoa(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		for f := 0; f < 50; f++ {
			fh, err := os.Create(filepath.Join(dir, "f"+strconv.Itoa(f)+".js"))
			if err != nil {
				tb.Fatal(err)
			}
			if err := fh.Close(); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// treeRoot is a generated project shared by the benchmarks of one size
// (SRT_BENCH_TREE_DIR keeps it between runs).
func treeRoot(b *testing.B, n int) string {
	base := os.Getenv("SRT_BENCH_TREE_DIR")
	if base == "" {
		base = b.TempDir()
	}
	root := filepath.Join(base, "tree-"+strconv.Itoa(n))
	if _, err := os.Stat(filepath.Join(root, "done")); err != nil {
		testenv.RemoveAll(b, root)
		genTree(b, root, n)
		write(b, filepath.Join(root, "done"), "")
	}
	return root
}

// BenchmarkCheck times, in a project of n files, what a run adds: the
// snapshot before the command with no cache (the first run) and with the
// cache of the last check (every later run), the check after it, and the
// snapshot file written and read.
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		root := treeRoot(b, n)
		spec := Spec{Roots: []string{root}, GitConfig: true, Home: b.TempDir()}
		first, _ := Snap(spec, nil, DefaultLimits)
		first.Taken += int64(time.Hour) // as the cache of a run long after the files were written
		b.Run("snap-uncached/files="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Snap(spec, nil, DefaultLimits)
			}
		})
		b.Run("snap-cached/files="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Snap(spec, first, DefaultLimits)
			}
		})
		start, _ := Snap(spec, first, DefaultLimits)
		start.Taken += int64(time.Hour)
		b.Run("check/files="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				Check(spec, start, DefaultLimits)
			}
		})
		f := filepath.Join(b.TempDir(), "snap")
		b.Run("file/files="+strconv.Itoa(n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				start.WriteFile(f)
				ReadSnapshot(f)
			}
		})
	}
}

// TestUserRelativeHooksPath: a relative core.hooksPath in the user's
// configuration (husky's .husky, a team's .githooks) names a directory in
// every working tree, those made during the run too: what the run writes
// there is found, and so is a link or a file put in place of that
// directory or on the way to it. A directory of that name outside a
// working tree is nothing to git.
func TestUserRelativeHooksPath(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("GIT_CONFIG_SYSTEM", "")
	write(t, filepath.Join(home, ".gitconfig"), "[core]\n\thooksPath = .githooks\n[include]\n\tpath = more\n")
	write(t, filepath.Join(home, "more"), "[core]\n\thooksPath = tools/hooks\n")
	for _, r := range []string{"a", "c", "d"} {
		write(t, filepath.Join(root, r, ".git/HEAD"), "ref: refs/heads/main\n")
	}
	write(t, filepath.Join(root, "a/.githooks/pre-push"), "the user's")
	write(t, filepath.Join(root, "c/.githooks/pre-push"), "the user's")
	write(t, filepath.Join(root, "d/tools/hooks/pre-push"), "the user's")
	write(t, filepath.Join(root, "elsewhere/pre-commit"), "evil")
	got, _, notes := run(t, Spec{Roots: []string{root}, GitConfig: true, Home: home}, func() {
		write(t, filepath.Join(root, "a/.githooks/pre-commit"), "evil")
		write(t, filepath.Join(root, "a/tools/hooks/pre-commit"), "evil")
		write(t, filepath.Join(root, "b/.git/HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(root, "b/.githooks/pre-commit"), "evil")
		testenv.RemoveAll(t, filepath.Join(root, "c/.githooks"))
		symlink(t, "../elsewhere", filepath.Join(root, "c/.githooks"))
		testenv.RemoveAll(t, filepath.Join(root, "d/tools"))
		symlink(t, "../elsewhere-tools", filepath.Join(root, "d/tools"))
		write(t, filepath.Join(root, "e/.git"), "gitdir: ../a/.git\n")
		write(t, filepath.Join(root, "e/.githooks/pre-commit"), "evil")
		write(t, filepath.Join(root, "f/.githooks/pre-commit"), "not a working tree")
	})
	want := []string{"a/.githooks/pre-commit", "a/tools/hooks/pre-commit", "b/.githooks/pre-commit", "c/.githooks", "d/tools", "e/.git", "e/.githooks/pre-commit"}
	if !same(got, want) || len(notes) != 0 {
		t.Fatalf("Check = %q, notes %q\nwant %q", got, notes, want)
	}
}

// TestCheckLimitFailsClosed: a walk that reaches its limit says what it
// could not vouch for; it moves nothing the run did not make.
func TestCheckLimitFailsClosed(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "src/main.go"), "package main")
	write(t, filepath.Join(root, "z/.git/HEAD"), "ref: refs/heads/main\n")
	spec := Spec{Roots: []string{root}, GitConfig: true}
	lim := Limits{Entries: 50, DirEntries: 1000}
	start, unrecorded := Snap(spec, nil, lim)
	if len(unrecorded) != 0 {
		t.Fatalf("Snap: %q", unrecorded)
	}
	for i := range 100 {
		write(t, filepath.Join(root, "src", "f"+strconv.Itoa(i)), "")
	}
	write(t, filepath.Join(root, "z/.git/hooks/pre-commit"), "evil")
	rep := Check(spec, start, lim)
	if len(rep.Unchecked) == 0 {
		t.Fatalf("a walk past its limit vouched for everything: found %v", rep.Found)
	}
	for _, f := range rep.Found {
		if f.Rel == "src" || f.Rel == "" {
			t.Errorf("moved what existed before the run: %q", f.Rel)
		}
	}
	// Snap past its limit: not recorded, so the run does not start.
	if _, unrecorded := Snap(spec, nil, lim); len(unrecorded) == 0 {
		t.Error("Snap past its limit recorded everything")
	}
}

// TestCheckOutOfDescriptors: a walk that runs out of descriptors (the
// command opened many connections through the proxies) cannot vouch for
// what it did not open, and moves none of the directories it could not
// open, which the run changed but did not make.
func TestCheckOutOfDescriptors(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b/c", "x/y/z"} {
		write(t, filepath.Join(root, d, "f"), "")
	}
	spec := Spec{Roots: []string{root}, GitConfig: true}
	start, _ := Snap(spec, nil, DefaultLimits)
	write(t, filepath.Join(root, "a/b/c/.bashrc"), "evil")
	write(t, filepath.Join(root, "x/y/z/g"), "")
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	// Every descriptor but a few taken, as srt's would be.
	var held []int
	for {
		fd, err := syscall.Open("/dev/null", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			break
		}
		held = append(held, fd)
	}
	for _, fd := range held[len(held)-2:] {
		syscall.Close(fd)
	}
	rep := Check(spec, start, DefaultLimits)
	for _, fd := range held {
		syscall.Close(fd)
	}
	if len(rep.Unchecked) == 0 {
		t.Fatalf("out of descriptors, the check vouched for everything: found %v", rep.Found)
	}
	for _, f := range rep.Found {
		if !strings.HasSuffix(f.Rel, ".bashrc") {
			t.Errorf("moved %q, which the run did not make", f.Rel)
		}
	}
}

// TestSnapChurn: directories another process removes and makes again
// while srt walks (a test runner's scratch directories under /tmp) are
// walked as they are now, never counted as places the walk could not
// vouch for: that would refuse to start every run with /tmp writable.
func TestSnapChurn(t *testing.T) {
	root := t.TempDir()
	const n = 64
	for i := range n {
		write(t, filepath.Join(root, "d"+strconv.Itoa(i), "f"), "")
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			d := filepath.Join(root, "d"+strconv.Itoa(i%n))
			if err := os.RemoveAll(d); err != nil {
				t.Error(err)
				return
			}
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	spec := Spec{Roots: []string{root}}
	for range 300 {
		if _, unrecorded := Snap(spec, nil, DefaultLimits); len(unrecorded) != 0 {
			t.Errorf("Snap with directories made again meanwhile: %q", unrecorded)
			break
		}
	}
	close(stop)
	<-done
}

// TestRootParentGone: a write root whose parent the command moved away
// and replaced by a link is not checked through the link: the check says
// so (a link to nothing too). Once the link is gone and nothing is in its
// place, the root is absent, as a root that is not there itself: there is
// nothing to check, and the walk says nothing of a link. Something else
// in the way (a file) is still a place the walk could not vouch for.
func TestRootParentGone(t *testing.T) {
	top := t.TempDir()
	proj := filepath.Join(top, "proj")
	root := filepath.Join(proj, "a/b")
	write(t, filepath.Join(root, "f"), "")
	spec := Spec{Roots: []string{proj, root}, GitConfig: true}
	start, notes := Snap(spec, nil, DefaultLimits)
	if len(notes) != 0 {
		t.Fatalf("Snap: %q", notes)
	}
	a := filepath.Join(proj, "a")
	if err := os.Rename(a, filepath.Join(proj, "a2")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(proj, "a2/b/.bashrc"), "evil")
	for _, target := range []string{"a2", "nowhere"} {
		symlink(t, target, a)
		rep := Check(spec, start, DefaultLimits)
		if len(rep.Unchecked) == 0 || !strings.Contains(strings.Join(rep.Unchecked, "\n"), "without following a link") {
			t.Errorf("a link (to %s) in place of the root's parent: unchecked %q, want it named", target, rep.Unchecked)
		}
		testenv.Remove(t, a)
	}
	rep := Check(spec, start, DefaultLimits)
	if len(rep.Unchecked) != 0 {
		t.Errorf("the root's parent gone, no link: unchecked %q, want none", rep.Unchecked)
	}
	var found []string
	for _, f := range rep.Found {
		found = append(found, f.Path())
	}
	if want := filepath.Join(proj, "a2/b/.bashrc"); !same(found, []string{want}) {
		t.Errorf("found %q, want %q (where the moved tree is now)", found, want)
	}
	write(t, a, "")
	rep = Check(spec, start, DefaultLimits)
	if len(rep.Unchecked) == 0 || strings.Contains(strings.Join(rep.Unchecked, "\n"), "link") {
		t.Errorf("a file in place of the root's parent: unchecked %q, want it named, not as a link", rep.Unchecked)
	}
}
