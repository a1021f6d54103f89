package resolve

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/internal/testenv"
)

// TestGitHost: git's files outside the repository that a write root
// covers are bound read-only where they exist and watched, existing or
// not, with the links on the way; the directories on the way are pinned;
// those no write root covers, or in the run's TMPDIR, are left; with the
// file-system policy disabled, nothing.
func TestGitHost(t *testing.T) {
	home, cwd := project(t)
	for _, f := range []string{".gitconfig", "dotfiles/git/config", "outside/gitconfig"} {
		testenv.MkdirAll(t, filepath.Join(home, filepath.Dir(f)), 0o755)
		testenv.WriteFile(t, filepath.Join(home, f), []byte("[user]\n"), 0o644)
	}
	testenv.MkdirAll(t, filepath.Join(home, ".config/git"), 0o755)
	testenv.Symlink(t, "../../dotfiles/git/config", filepath.Join(home, ".config/git/linked"))
	h := func(rel string) string { return filepath.Join(home, rel) }
	gitHost := []string{h(".gitconfig"), h(".config/git/config"), h(".config/git/linked"), h(".gitk"), h("outside/gitconfig"), h("new/dir/config"), "/dev/null", "/tmp/claude/x"}
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [".", "~/.gitconfig", "~/.config", "~/dotfiles", "~/.gitk", "~/new", "~/other"], "denyWrite": []}}`
	res, err := Resolve(plan(t, settings), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3, GitHost: gitHost})
	if err != nil {
		t.Fatal(err)
	}
	wantWatch := []string{h(".gitconfig"), h(".config/git/config"), h(".config/git/linked"), h("dotfiles/git/config")}
	if !slices.Equal(res.GitWatch, wantWatch) {
		t.Errorf("GitWatch =\n%q\nwant\n%q", res.GitWatch, wantWatch)
	}
	args := strings.Join(res.Args, " ")
	for _, want := range []string{
		"--ro-bind " + h(".config/git") + " " + h(".config/git"), // pins

		"--ro-bind " + h("dotfiles/git") + " " + h("dotfiles/git"),
		"--ro-bind " + h("dotfiles/git/config") + " " + h("dotfiles/git/config"),
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, args)
		}
	}
	// ~/.gitk and ~/new are write roots that do not exist: nothing
	// there is writable.
	for _, never := range []string{h("outside/gitconfig"), h("new/dir/config"), h(".gitk"), "/tmp/claude/x", "--ro-bind /dev/null /dev/null"} {
		if strings.Contains(args, never) || slices.Contains(res.GitWatch, never) {
			t.Errorf("%q is protected or watched, and no write root covers it:\n%s", never, args)
		}
	}
	if !slices.Contains(res.Args, h(".gitconfig")) {
		// ~/.gitconfig is a write root of its own: bound writable, then
		// read-only over it.
		t.Errorf("~/.gitconfig is not bound read-only:\n%s", args)
	}

	// A file whose directory the command may make is watched.
	res, err = Resolve(plan(t, settings), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3, GitHost: []string{h("other/x/config")}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.GitWatch, []string{h("other/x/config")}) {
		t.Errorf("GitWatch of a file whose directory is to be made = %q", res.GitWatch)
	}

	disabled := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"disabled": true, "denyRead": [], "allowWrite": [], "denyWrite": []}}`
	res, err = Resolve(plan(t, disabled), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), SeccompFD: 3, GitHost: gitHost})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GitWatch) != 0 {
		t.Errorf("file-system policy disabled: GitWatch = %q", res.GitWatch)
	}
}

// TestGitHostStep: the plan names the files it protects; a name this srt
// does not know is refused, and a plan without the step is protected the
// same way.
func TestGitHostStep(t *testing.T) {
	home, cwd := project(t)
	testenv.WriteFile(t, filepath.Join(home, ".gitconfig"), nil, 0o644)
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["~"], "denyWrite": []}}`
	steps := plan(t, settings)
	i := slices.IndexFunc(steps, func(s bwrap.Step) bool { return s.Directive == bwrap.GitHost })
	if i < 0 || steps[i].Operand != policy.GitHostOperand() {
		t.Fatalf("the plan has no @%s step with %q", bwrap.GitHost, policy.GitHostOperand())
	}
	host := Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: t.TempDir(), SeccompFD: 3, GitHost: []string{filepath.Join(home, ".gitconfig")}}
	for _, c := range []struct {
		name    string
		steps   []bwrap.Step
		wantErr string
	}{
		{"as compiled", steps, ""},
		{"without the step", slices.Delete(slices.Clone(steps), i, i+1), ""},
		{"an unknown file", replaceOperand(steps, i, "config=~/.gitconfig,~/.newconfig"), `unknown file "~/.newconfig"`},
		{"an unknown parameter", replaceOperand(steps, i, "config=~/.gitconfig hooks=x"), `unknown parameter "hooks=x"`},
	} {
		res, err := Resolve(c.steps, host)
		switch {
		case c.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.wantErr)
			}
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !slices.Equal(res.GitWatch, host.GitHost):
			t.Errorf("%s: GitWatch = %q, want %q", c.name, res.GitWatch, host.GitHost)
		}
	}
}

func replaceOperand(steps []bwrap.Step, i int, operand string) []bwrap.Step {
	out := slices.Clone(steps)
	out[i].Operand = operand
	return out
}

// TestGitHostPlaceholderIsAFile: in a working directory that is the home,
// an absent ~/.gitconfig is kept from being made with an empty file, which
// git on the host and in the sandbox reads (a directory there makes every
// git command fail while the run lasts); the other absent protected names
// get the empty directory; each source is bound read-only at itself.
func TestGitHostPlaceholderIsAFile(t *testing.T) {
	home := t.TempDir()
	src := t.TempDir()
	emptyDir, emptyFile := filepath.Join(src, "dir"), filepath.Join(src, "file")
	testenv.Mkdir(t, emptyDir, 0o700)
	testenv.WriteFile(t, emptyFile, nil, 0o400)
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
	gitconfig := filepath.Join(home, ".gitconfig")
	res, err := Resolve(plan(t, settings), Host{Home: home, Cwd: home, TmpDir: t.TempDir(), EmptyDir: emptyDir, EmptyFile: emptyFile, SeccompFD: 3, GitHost: []string{gitconfig}})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(res.Args, " ")
	for _, want := range []string{
		"--ro-bind " + emptyFile + " " + gitconfig,
		"--ro-bind " + emptyDir + " " + filepath.Join(home, ".bashrc"),
		"--ro-bind " + emptyFile + " " + emptyFile,
		"--ro-bind " + emptyDir + " " + emptyDir,
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, args)
		}
	}
	if !slices.Contains(res.Placeholders, gitconfig) {
		t.Errorf("~/.gitconfig is not among the placeholders: %q", res.Placeholders)
	}
}
