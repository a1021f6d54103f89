//go:build linux

package quarantine

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// since is a file-system time taken the way a run takes it: the change
// time of a file created now.
func since(t *testing.T) int64 {
	f := filepath.Join(t.TempDir(), "t")
	os.WriteFile(f, nil, 0o600)
	var st unix.Stat_t
	unix.Stat(f, &st)
	return st.Ctim.Nano()
}

func write(t *testing.T, p, text string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheck: what was written after the start is found, what was there
// before, empty files, hook samples and a fresh git init config are not.
func TestCheck(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, ".git/hooks/pre-commit"), "old") // before the run
	write(t, filepath.Join(root, ".vscode/old.json"), "{}")
	time.Sleep(20 * time.Millisecond)
	s := since(t)
	for p, text := range map[string]string{
		".git/hooks/post-commit":        "new",
		".git/hooks/pre-push.sample":    "sample",
		".git/config":                   "[core]\n\trepositoryformatversion = 0\n\tbare = false\n",
		"a/.bashrc":                     "evil",
		"a/.profile":                    "",
		"a/.vscode/settings.json":       "{}",
		"b/.git/config":                 "[core]\n\tfsmonitor = /x\n",
		"b/.git/commondir":              "/x",
		"c/.git":                        "gitdir: /x",
		"bare/HEAD":                     "ref: refs/heads/main",
		"bare/config":                   "[core]\n\tpager = /x\n",
		"bare/objects/x":                "",
		"bare/refs/heads/x":             "",
		"d/.git/modules/m/HEAD":         "ref: refs/heads/main",
		"d/.git/modules/m/hooks/update": "x",
		"node_modules/p/.bashrc":        "evil",
		"plain.txt":                     "data",
	} {
		write(t, filepath.Join(root, p), text)
	}
	found, notes := Check(Spec{Roots: []string{root}, Since: s, GitConfig: true})
	var got []string
	for _, f := range found {
		rel, _ := filepath.Rel(root, f.Path)
		got = append(got, rel)
	}
	sort.Strings(got)
	want := []string{".git/hooks/post-commit", "a/.bashrc", "a/.vscode/settings.json", "b/.git/commondir", "b/.git/config", "bare/config", "c/.git", "d/.git/modules/m/hooks/update", "node_modules/p/.bashrc"}
	if len(notes) != 0 || len(got) != len(want) {
		t.Fatalf("Check = %q, notes %q; want %q", got, notes, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Check = %q; want %q", got, want)
		}
	}
	// allowGitConfig: the configuration is the command's to write.
	found, _ = Check(Spec{Roots: []string{filepath.Join(root, "b")}, Since: s, GitConfig: false})
	if len(found) != 1 || found[0].Path != filepath.Join(root, "b/.git/commondir") {
		t.Errorf("with allowGitConfig, Check = %v; want only the commondir", found)
	}
}

// TestStore: an item moves out of the tree and back.
func TestStore(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".bashrc")
	write(t, p, "evil")
	s, err := Open(filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	items, err := s.Move([]Finding{{Path: p, Why: "test"}})
	if err != nil || len(items) != 1 {
		t.Fatal(items, err)
	}
	if _, err := os.Lstat(p); err == nil {
		t.Fatal("still in the tree")
	}
	if l, _ := s.List(); len(l) != 1 || l[0].Path != p {
		t.Fatalf("List = %v", l)
	}
	write(t, p, "other")
	if _, err := s.Release(items[0].ID); err == nil {
		t.Fatal("Release over an existing file succeeded")
	}
	os.Remove(p)
	if _, err := s.Release(items[0].ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "evil" {
		t.Fatalf("released %q", b)
	}
	if _, err := s.Release("../x"); err == nil {
		t.Fatal("Release of ../x succeeded")
	}
}

// BenchmarkCheck walks a tree of about 10 000 entries with nothing to
// find (the cost added to every run's end).
func BenchmarkCheck(b *testing.B) {
	root := b.TempDir()
	for i := 0; i < 100; i++ {
		for j := 0; j < 100; j++ {
			p := filepath.Join(root, "d"+string(rune('a'+i%26))+string(rune('a'+i/26)), "f"+string(rune('a'+j%26))+string(rune('a'+j/26)))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, nil, 0o644)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Check(Spec{Roots: []string{root}, Since: time.Now().UnixNano(), GitConfig: true})
	}
}
