package policy

import (
	"path"
	"strings"
)

// Git reads its configuration, and gitk its start-up file, from files
// outside any repository: a command that writes one has the user's next
// git command, in any repository, run a program it chose (core.fsmonitor,
// core.pager, core.sshCommand, aliases, filter and diff drivers,
// core.hooksPath, include.path; gitk runs its file as Tcl). Wherever a
// write root covers them, the mandatory denies protect them, and every
// file a configuration among them includes
// (docs/protected-names.md#outside-the-repository).
//
// Where they are is a host fact (the home directory, the environment): a
// plan names them by these spellings and the runtime finds the paths
// (ExpandGitHost, runtime/gitconfig). A spelling is "~/" and a path below
// the home directory, "$NAME" (the value of an environment variable) with
// or without a path below it, or an absolute path.
var (
	// GitHostConfig are git's configuration files besides a repository's
	// own, in the order git reads them: the system's (/etc/gitconfig, or
	// $GIT_CONFIG_SYSTEM in its place) and the user's ($XDG_CONFIG_HOME
	// in place of ~/.config when it is set, and ~/.gitconfig; or
	// $GIT_CONFIG_GLOBAL in place of both). All are protected, whichever
	// the environment makes git read: the user's next git command may run
	// with another.
	GitHostConfig = []string{"/etc/gitconfig", "$GIT_CONFIG_SYSTEM", "~/.config/git/config", "$XDG_CONFIG_HOME/git/config", "~/.gitconfig", "$GIT_CONFIG_GLOBAL"}
	// GitkStartup are gitk's start-up files, which gitk runs as Tcl: the
	// first that exists of $XDG_CONFIG_HOME/git/gitk (or
	// ~/.config/git/gitk) and ~/.gitk.
	GitkStartup = []string{"~/.config/git/gitk", "$XDG_CONFIG_HOME/git/gitk", "~/.gitk"}
)

// GitHostWhy is the one-line reason every artifact gives for protecting
// GitHostConfig and GitkStartup.
const GitHostWhy = "git's configuration outside the repository and gitk's start-up file, with what they include, whatever the settings say: they make the user's next git command, in any repository, run programs"

// GitHostOperand is how a Linux plan names the files: "config=SPELLING,…
// gitk=SPELLING,…".
func GitHostOperand() string {
	return "config=" + strings.Join(GitHostConfig, ",") + " gitk=" + strings.Join(GitkStartup, ",")
}

// GitHostHome are the spellings of GitHostConfig and GitkStartup below the
// home directory, as paths below ${HOME}: what a platform can protect
// without reading the environment.
func GitHostHome() []Path {
	var out []Path
	for _, s := range append(append([]string{}, GitHostConfig...), GitkStartup...) {
		if rest, ok := strings.CutPrefix(s, "~/"); ok {
			out = append(out, Home.Join(rest))
		}
	}
	return out
}

// ExpandGitHost returns the path a spelling of GitHostConfig or
// GitkStartup names on a host whose home directory is home, with getenv
// reading its environment (nil: none): "" when it names nothing there (no
// home directory; the variable unset, or not an absolute path, which git
// would take from each command's working directory). The path is clean;
// links in it are the caller's to resolve.
func ExpandGitHost(spelling, home string, getenv func(string) string) string {
	var base, rest string
	switch {
	case strings.HasPrefix(spelling, "~/"):
		base, rest = home, spelling[2:]
	case strings.HasPrefix(spelling, "$"):
		name, r, _ := strings.Cut(spelling[1:], "/")
		if getenv != nil {
			base = getenv(name)
		}
		rest = r
	default:
		base = spelling
	}
	if !path.IsAbs(base) {
		return ""
	}
	return path.Join(base, rest)
}
