package gitconfig

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// TestGlobalHooksPaths: the user's core.hooksPath values, from every file
// git reads besides the repository's own, includes followed, written by
// hand; and the host's git reads the same ones.
func TestGlobalHooksPaths(t *testing.T) {
	home := t.TempDir()
	xdg := filepath.Join(home, "xdg")
	files := map[string]string{
		".gitconfig":        "[include]\n\tpath = .gitconfig.local\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/work.inc\n",
		".gitconfig.local":  "[core]\n\thooksPath = .husky\n",
		"work.inc":          "[core]\n\thooksPath = ~/hooks\n",
		"xdg/git/config":    "[core]\n\thooksPath = tools/git-hooks\n",
		"global.inc":        "[core]\n\thooksPath = /abs/hooks\n[include]\n\tpath = global.inc\n", // includes itself
		"elsewhere/global":  "[include]\n\tpath = ../global.inc\n",
		"system":            "[core]\n\thooksPath = .githooks\n",
		"loop/a":            "[include]\n\tpath = b\n",
		"loop/b":            "[include]\n\tpath = a\n",
		"not-included.conf": "[core]\n\thooksPath = /never\n",
	}
	for name, text := range files {
		p := filepath.Join(home, name)
		testenv.MkdirAll(t, filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"XDG_CONFIG_HOME":   xdg,
		"GIT_CONFIG_GLOBAL": filepath.Join(home, "elsewhere/global"),
		"GIT_CONFIG_SYSTEM": filepath.Join(home, "system"),
	}
	got := GlobalHooksPaths(home, func(k string) string { return env[k] })
	want := []string{".githooks", "tools/git-hooks", ".husky", filepath.Join(home, "hooks"), "/abs/hooks"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("GlobalHooksPaths = %q, want %q", got, want)
	}

	// The host's git, reading ~/.gitconfig with its includes (a
	// repository under ~/work takes the conditional one), sees each value
	// of ~/.gitconfig's chain that srt protects.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(home, "work", "r")
	for _, args := range [][]string{{"init", "-q", repo}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	cmd := exec.Command("git", "-C", repo, "config", "--get-all", "core.hooksPath")
	cmd.Env = []string{"HOME=" + home, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git config: %v", err)
	}
	for _, v := range strings.Fields(string(out)) {
		if !slices.Contains(got, expandHome(home, v)) {
			t.Errorf("git reads core.hooksPath = %q, which srt does not protect (it has %q)", v, got)
		}
	}
}

// TestHooksDir: what a value names, for a working tree's top.
func TestHooksDir(t *testing.T) {
	for _, c := range []struct{ home, top, h, want string }{
		{"/h", "/p", ".husky", "/p/.husky"},
		{"/h", "/p", "tools/../hooks", "/p/hooks"},
		{"/h", "", ".husky", ""},
		{"/h", "/p", "~/hooks", "/h/hooks"},
		{"/h", "", "/abs//hooks/", "/abs/hooks"},
	} {
		if got := HooksDir(c.home, c.top, c.h); got != c.want {
			t.Errorf("HooksDir(%q, %q, %q) = %q, want %q", c.home, c.top, c.h, got, c.want)
		}
	}
}

// TestReadOutside: the files git reads outside any repository, each once,
// whether or not it exists: every place the environment or the home
// names, and what they include, in the order git reads them.
func TestReadOutside(t *testing.T) {
	home := t.TempDir()
	for name, text := range map[string]string{
		".gitconfig":       "[include]\n\tpath = .gitconfig.local\n[includeIf \"gitdir:~/work/\"]\n\tpath = ~/work.inc\n",
		".gitconfig.local": "[include]\n\tpath = absent.inc\n",
		"work.inc":         "[include]\n\tpath = .gitconfig\n", // back to the start
		"xdg/git/config":   "[core]\n\thooksPath = /abs/hooks\n",
	} {
		p := filepath.Join(home, name)
		testenv.MkdirAll(t, filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "xdg"), "GIT_CONFIG_GLOBAL": filepath.Join(home, "g", "global")}
	got := ReadOutside(home, func(k string) string { return env[k] })
	h := func(rel string) string { return filepath.Join(home, rel) }
	want := []string{
		"/etc/gitconfig",
		h(".config/git/config"), h("xdg/git/config"),
		h(".gitconfig"), h(".gitconfig.local"), h("absent.inc"), h("work.inc"),
		h("g/global"),
		h(".config/git/gitk"), h("xdg/git/gitk"), h(".gitk"),
	}
	var files []string
	for _, f := range got.Files {
		if f == "/etc/gitconfig" || !strings.HasPrefix(f, "/etc/") {
			files = append(files, f) // not what the host's /etc/gitconfig includes
		}
	}
	if !slices.Equal(files, want) {
		t.Errorf("ReadOutside(…).Files =\n%q\nwant\n%q", files, want)
	}
	if !slices.Equal(got.HooksPaths, []string{"/abs/hooks"}) {
		t.Errorf("ReadOutside(…).HooksPaths = %q, want [/abs/hooks]", got.HooksPaths)
	}
	// Without XDG_CONFIG_HOME and GIT_CONFIG_GLOBAL: the home's names only.
	got = ReadOutside(home, nil)
	for _, f := range got.Files {
		if strings.Contains(f, "xdg") || strings.Contains(f, "global") {
			t.Errorf("ReadOutside without an environment lists %q", f)
		}
	}
}

func TestIncluded(t *testing.T) {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	gitDir := filepath.Join(dir, "proj", ".git")
	for _, d := range []string{home, gitDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(gitDir, "config"), "[core]\n\thooksPath = own\n[include]\n\tpath = ../project.gitconfig\n\tpath = ../absent\n[includeIf \"onbranch:main\"]\n\tpath = ~/team.gitconfig\n")
	write(filepath.Join(dir, "proj", "project.gitconfig"), "[core]\n\thooksPath = .husky\n[include]\n\tpath = .git/config\n")
	write(filepath.Join(home, "team.gitconfig"), "[user]\n\tname = t\n")
	files, hooks := Included(home, filepath.Join(gitDir, "config"))
	if want := []string{filepath.Join(dir, "proj", "project.gitconfig"), filepath.Join(gitDir, "config"), filepath.Join(dir, "proj", "absent"), filepath.Join(home, "team.gitconfig")}; !slices.Equal(files, want) {
		t.Errorf("files = %q, want %q", files, want)
	}
	if want := []string{".husky", "own"}; !slices.Equal(hooks, want) {
		t.Errorf("hooks = %q, want %q", hooks, want)
	}
}
