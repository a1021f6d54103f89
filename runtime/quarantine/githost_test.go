//go:build linux

package quarantine

import (
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// TestCheckGitHost: git's files outside the repository (Spec.GitWatch)
// new or changed during the run are found, with their own reason; one
// left as it was is not; a link put on the way to one is found itself; a
// directory on the way replaced by a file, a directory (the shape of a
// placeholder) or an empty file leave git nothing to read, and the check
// says nothing of them; a name both the walk and the watch find is found
// once.
func TestCheckGitHost(t *testing.T) {
	home := t.TempDir()
	h := func(rel string) string { return filepath.Join(home, rel) }
	write(t, h(".gitconfig"), "[user]\n\tname = me\n")
	write(t, h("kept/config"), "[user]\n\tname = me\n")
	write(t, h("changed/config"), "[user]\n\tname = me\n")
	write(t, h(".config/other"), "")
	write(t, h("file/x"), "")
	spec := Spec{Roots: []string{home}, Home: home, GitConfig: true, GitWatch: []string{
		h(".gitconfig"), h("kept/config"), h("changed/config"), h("new/config"),
		h(".config/git/config"), h("file/x/config"), h("elsewhere/config"),
		h("placeholder/config"), h("empty/config"),
	}}
	rel, found, notes := run(t, spec, func() {
		write(t, h(".gitconfig"), "[core]\n\tfsmonitor = /tmp/p\n")
		write(t, h("changed/config"), "[user]\n\tname = mE\n")
		write(t, h("new/config"), "[core]\n\tpager = /tmp/p\n")
		write(t, h("evil/config"), "[core]\n\tpager = /tmp/p\n")
		symlink(t, h("evil"), h(".config/git"))
		testenv.RemoveAll(t, h("file/x"))
		write(t, h("file/x"), "")
		testenv.MkdirAll(t, h("placeholder/config"), 0o755) // a placeholder's shape
		write(t, h("empty/config"), "")
	})
	want := []string{".config/git", ".gitconfig", "changed/config", "new/config"}
	if !same(rel, want) || len(notes) != 0 {
		t.Fatalf("found %q (unchecked %q), want %q", rel, notes, want)
	}
	for _, f := range found {
		switch {
		case f.Rel == "git" && f.Why != whyGitHostWay, strings.HasSuffix(f.Path(), "/config") && f.Why != whyGitHost:
			t.Errorf("%s: why %q", f.Path(), f.Why)
		}
	}

	// A link on the way outside the write roots is not the command's to
	// have made: the check says it could not vouch for the file.
	out := t.TempDir()
	write(t, filepath.Join(out, "d/config"), "")
	spec = Spec{Roots: []string{h("kept")}, Home: home, GitWatch: []string{filepath.Join(out, "d/config")}}
	_, _, notes = run(t, spec, func() {
		testenv.Rename(t, filepath.Join(out, "d"), filepath.Join(out, "e"))
		symlink(t, filepath.Join(out, "e"), filepath.Join(out, "d"))
	})
	if len(notes) != 1 || !strings.Contains(notes[0], "symbolic link") {
		t.Errorf("a link on the way outside the write roots: unchecked %q", notes)
	}
}
