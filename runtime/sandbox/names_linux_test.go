//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// gitEnv is an environment in which git needs no user configuration.
func gitEnv(home string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test",
		"GIT_CONFIG_NOSYSTEM=1",
	}
}

// hostGit runs git in dir on the host, as the user would after the run.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(filepath.Dir(dir))
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// project makes a working directory below a private home; with repo, a
// git repository with one commit.
func gitProject(t *testing.T, repo bool) (home, dir string) {
	t.Helper()
	home = t.TempDir()
	dir = filepath.Join(home, "proj")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "main.txt"), []byte("hello\n"), 0o644)
	if repo {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "first"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = dir
			cmd.Env = gitEnv(home)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	}
	return home, dir
}

// runIn runs script with allowWrite ["."] in dir and returns its exit
// code, stdout and stderr.
func runIn(t *testing.T, home, dir, script string) (int, string, string) {
	t.Helper()
	m, err := NewManager(compileFull(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	o := Options{Home: home, Cwd: dir, Env: gitEnv(home), Stdout: &out, Stderr: &errb, Stdin: strings.NewReader("")}
	res, err := m.Run(context.Background(), []string{"/bin/sh", "-c", script}, o)
	if err != nil {
		t.Fatalf("run: %v (stderr %s)", err, errb.String())
	}
	return res.ExitCode, out.String(), errb.String()
}

// TestGitAddAllInSandbox: the protection of absent names does not trip
// tools that walk the project: git add -A and git commit work in a
// repository with allowWrite ["."], and the absent names still cannot
// be created.
func TestGitAddAllInSandbox(t *testing.T) {
	testenv.Require(t, "bwrap", "git")
	home, dir := gitProject(t, true)
	code, out, errOut := runIn(t, home, dir, `
echo more > new.txt
git add -A && git commit -qm second && echo committed
git status --porcelain; git submodule status
find . -path ./.git -prune -o -type c -print
for n in .bashrc .gitconfig .mcp.json .vscode/settings.json .idea/x .claude/commands/x; do
  mkdir -p "$(dirname "$n")" 2>/dev/null; (echo x > "$n") 2>/dev/null && echo "created $n"
done
true`)
	if code != 0 || out != "committed\n" || errOut != "" {
		t.Errorf("exit %d, stdout %q, stderr %s; want only \"committed\"", code, out, errOut)
	}
	if got := hostGit(t, dir, "log", "--format=%s"); got != "second\nfirst\n" {
		t.Errorf("host git log: %q", got)
	}
	if got := hostGit(t, dir, "show", "--name-only", "--format=", "HEAD"); got != "new.txt\n" {
		t.Errorf("the commit holds %q; want only new.txt", got)
	}
}
