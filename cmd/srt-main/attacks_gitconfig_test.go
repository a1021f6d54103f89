//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// The user's git configuration outside any repository: a command that
// writes it has the user's next git command, in any repository, run a
// program (core.fsmonitor here). Each attack ends with the host's real
// git in the project, as the user would run it.

// plantConfig is a command script that appends a core.fsmonitor naming
// the payload to the file f (a shell word: "$HOME/…" expands in the
// sandbox), making its directories.
func plantConfig(f string) string {
	return `set -- ` + f + ` && mkdir -p "$(dirname "$1")" && printf '[core]\n\tfsmonitor = %s\n' "$P" >> "$1"`
}

// gitConfigAttack is an attack on the user's git configuration: settings
// whose allowWrite is writes (JSON list items), setup making the user's
// files, and the command's script. The script first leaves a mark in the
// project: a run that did not start the command proves nothing.
func gitConfigAttack(name, writes string, setup func(w *world), script string) attack {
	return attack{
		name: "user git config: " + name,
		setup: func(w *world) {
			w.write("s.json", strings.Replace(writeProject, `"."`, writes, 1))
			if setup != nil {
				setup(w)
			}
			gitRepo(w, w.proj)
		},
		steps: func(w *world, sandboxed bool) {
			w.inSandbox(sandboxed, "s.json", `touch "$HOME/proj/ran"; `+script)
			w.hostGit(w.proj)
		},
		judge: func(w *world) string {
			if _, err := os.Stat(filepath.Join(w.proj, "ran")); err != nil {
				return "the command did not run"
			}
			return w.pwned()
		},
	}
}

// userConfig writes the user's own configuration at rel below the home.
func userConfig(rel string) func(w *world) {
	return func(w *world) { w.write(filepath.Join(w.home, rel), "[user]\n\tname = t\n") }
}

var userGitConfigAttacks = []attack{
	gitConfigAttack("~/.config/git/config rewritten", `"~"`, userConfig(".config/git/config"),
		plantConfig(`"$HOME/.config/git/config"`)),
	gitConfigAttack("~/.config/git/config created", `"~"`, nil,
		plantConfig(`"$HOME/.config/git/config"`)),
	// ~/.config is writable on its own: the command makes ~/.config/git a
	// link to a directory it wrote.
	gitConfigAttack("~/.config/git made a link", `".", "~/.config"`, userConfig(".config/other/settings"),
		plantConfig(`"$HOME/proj/evil/config"`)+` && ln -s "$HOME/proj/evil" "$HOME/.config/git"`),
	// The user keeps the file in a dotfiles repository, linked into
	// place; the command replaces the link.
	gitConfigAttack("a linked ~/.config/git/config replaced", `"~"`, func(w *world) {
		userConfig("dotfiles/git/config")(w)
		testenv.MkdirAll(w.t, filepath.Join(w.home, ".config/git"), 0o755)
		testenv.Symlink(w.t, "../../dotfiles/git/config", filepath.Join(w.home, ".config/git/config"))
		w.chown()
	}, `rm -f "$HOME/.config/git/config" && `+plantConfig(`"$HOME/.config/git/config"`)),
	gitConfigAttack("$XDG_CONFIG_HOME/git/config created", `".", "~/xdg"`, func(w *world) {
		w.setenv = append(w.setenv, "XDG_CONFIG_HOME="+filepath.Join(w.home, "xdg"))
		userConfig("xdg/other/settings")(w)
	}, plantConfig(`"$XDG_CONFIG_HOME/git/config"`)),
	gitConfigAttack("$GIT_CONFIG_GLOBAL in a write root", `".", "~/cfg"`, func(w *world) {
		w.setenv = append(w.setenv, "GIT_CONFIG_GLOBAL="+filepath.Join(w.home, "cfg/global.gitconfig"))
		userConfig("cfg/global.gitconfig")(w)
	}, plantConfig(`"$GIT_CONFIG_GLOBAL"`)),
	gitConfigAttack("$GIT_CONFIG_GLOBAL created in a write root", `".", "~/cfg"`, func(w *world) {
		w.setenv = append(w.setenv, "GIT_CONFIG_GLOBAL="+filepath.Join(w.home, "cfg/global.gitconfig"))
		userConfig("cfg/other")(w)
	}, plantConfig(`"$GIT_CONFIG_GLOBAL"`)),
	// The user's configuration includes a file in a write root.
	gitConfigAttack("a file ~/.gitconfig includes", `".", "~/cfg"`, func(w *world) {
		w.write(filepath.Join(w.home, ".gitconfig"), "[include]\n\tpath = ~/cfg/local.gitconfig\n")
		userConfig("cfg/other")(w)
	}, plantConfig(`"$HOME/cfg/local.gitconfig"`)),
}

// repoIncludeAttack: the repository's configuration includes a file of
// the working tree (git config include.path ../NAME, a way to share a
// project's configuration), which the command rewrites, or creates when
// it does not exist (an optional local file).
func repoIncludeAttack(name string, exists bool) attack {
	return attack{
		name: "repository config: " + name,
		setup: func(w *world) {
			w.write("s.json", writeProject)
			if exists {
				w.write("project.gitconfig", "[user]\n\tname = t\n")
			}
			gitRepo(w, w.proj)
			w.sh("git config include.path ../project.gitconfig")
		},
		steps: func(w *world, sandboxed bool) {
			w.inSandbox(sandboxed, "s.json", `touch "$HOME/proj/ran"; `+plantConfig("project.gitconfig"))
			w.hostGit(w.proj)
		},
		judge: func(w *world) string {
			if _, err := os.Stat(filepath.Join(w.proj, "ran")); err != nil {
				return "the command did not run"
			}
			return w.pwned()
		},
	}
}

func init() {
	attacks = append(append(attacks, userGitConfigAttacks...),
		repoIncludeAttack("a file it includes", true),
		repoIncludeAttack("a file it includes, created", false))
}

// TestGitConfigPlaceholderReadable: run in the home, where ~/.gitconfig
// does not exist, srt keeps the command from making it with a mount point
// that git reads as an empty file: git works in the sandbox and, while the
// run lasts, on the host; the mount point is gone afterwards.
func TestGitConfigPlaceholderReadable(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
	if err := os.WriteFile(filepath.Join(dir, ".srt-settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	hostGit := make(chan string, 1)
	go func() {
		started := filepath.Join(dir, "started")
		for range 200 {
			if _, err := os.Stat(started); err == nil {
				cmd := exec.Command("git", "config", "--list")
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME="+filepath.Join(dir, ".config"), "GIT_CONFIG_NOSYSTEM=1")
				cmd.Env = slices.DeleteFunc(cmd.Env, func(e string) bool { return strings.HasPrefix(e, "GIT_CONFIG_GLOBAL=") })
				out, err := cmd.CombinedOutput()
				hostGit <- fmt.Sprintf("%v %s", err, out)
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		hostGit <- "the command never started"
	}()
	code, out, errOut := srt(t, dir, "", "-c", `git config --list; echo "in=$?"; touch started; sleep 1`)
	if code != 0 || !strings.Contains(out, "in=0") {
		t.Errorf("git in the sandbox, run in the home: %d %q %s", code, out, errOut)
	}
	if got := <-hostGit; got != "<nil> " {
		t.Errorf("git on the host while the run lasts: %s", got)
	}
	if _, err := os.Lstat(filepath.Join(dir, ".gitconfig")); !os.IsNotExist(err) {
		t.Errorf("after the run, ~/.gitconfig: %v (want it absent)", err)
	}
}
