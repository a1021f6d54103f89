package realpath

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestResolve: a path resolved one name at a time, with every link
// met on the way as its real directory and its name.
func TestResolve(t *testing.T) {
	d := t.TempDir()
	for _, dir := range []string{"dotfiles/git", "home/.config"} {
		os.MkdirAll(filepath.Join(d, dir), 0o755)
	}
	os.WriteFile(filepath.Join(d, "dotfiles/git/config"), nil, 0o644)
	os.Symlink("../../dotfiles/git/config", filepath.Join(d, "dotfiles/git/linked")) // relative, inside
	os.Symlink(filepath.Join(d, "dotfiles/git"), filepath.Join(d, "home/.config/git"))
	os.Symlink("cfg", filepath.Join(d, "home/.cfg")) // dangling
	os.Symlink("loop", filepath.Join(d, "home/loop"))
	for _, c := range []struct {
		p, real string
		links   []string
	}{
		{"home/.config/git/config", "dotfiles/git/config", []string{"home/.config/git"}},
		{"home/.config/git/absent/x", "dotfiles/git/absent/x", []string{"home/.config/git"}},
		{"home/.config/git/linked", "dotfiles/git/config", []string{"home/.config/git", "dotfiles/git/linked"}},
		{"home/.config/git/../git/config", "dotfiles/git/config", []string{"home/.config/git"}},
		{"home/.cfg/git/config", "home/cfg/git/config", []string{"home/.cfg"}},
		{"home/none/config", "home/none/config", nil},
	} {
		real, links := Resolve(filepath.Join(d, c.p))
		var want []string
		for _, l := range c.links {
			want = append(want, filepath.Join(d, l))
		}
		if real != filepath.Join(d, c.real) || !slices.Equal(links, want) {
			t.Errorf("Resolve(%s) = %s, %q; want %s, %q", c.p, real, links, c.real, c.links)
		}
	}
	if _, links := Resolve(filepath.Join(d, "home/loop/x")); len(links) != MaxLinks+1 {
		t.Errorf("followLinks of a loop met %d links, want %d", len(links), MaxLinks+1)
	}
}

// TestResolveDotDot: ".." goes up from where a link led, as the kernel
// goes, not from the link's name; a relative path is only cleaned.
func TestResolveDotDot(t *testing.T) {
	d := t.TempDir()
	for _, dir := range []string{"real/deep", "home"} {
		if err := os.MkdirAll(filepath.Join(d, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(d, "real/deep"), filepath.Join(d, "home/link")); err != nil {
		t.Fatal(err)
	}
	if got := Of(d + "/home/link/../x"); got != filepath.Join(d, "real/x") {
		t.Errorf("Of(home/link/../x) = %s, want %s (folded as text it would be home/x)", got, filepath.Join(d, "real/x"))
	}
	if got, links := Resolve("a/../b"); got != "b" || links != nil {
		t.Errorf("Resolve of a relative path = %q, %q", got, links)
	}
}
