package gitconfig

import (
	"path/filepath"
	"strings"

	"srt.dev/compiler/policy"
)

// maxIncludeDepth bounds the include.path chains followed (git's own
// limit is 10).
const maxIncludeDepth = 10

// Outside is what git reads outside any repository, on this host: the
// files of policy.GitHostConfig and policy.GitkStartup, and what the
// configuration files among them include.
type Outside struct {
	// Files are the files through which git or gitk run programs: the
	// configuration files (policy.GitHostConfig), every file they include
	// (include.path and includeIf.*.path, whatever the condition: a file
	// protected that git does not read costs nothing, one missed is a
	// hole), and gitk's start-up files (policy.GitkStartup). Each is an
	// absolute path as git spells it ("~/" expanded, links not resolved),
	// listed once, whether or not it exists: git reads it once it does.
	Files []string
	// HooksPaths are the core.hooksPath values of the configuration files
	// and what they include, each as HooksDir takes it: an absolute one
	// names one directory, a relative one a directory in every working
	// tree.
	HooksPaths []string
}

// ReadOutside reads what git reads outside any repository. getenv reads
// srt's environment (nil: none), which decides which files these are
// (policy.ExpandGitHost); all of them are read, whatever
// GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL or XDG_CONFIG_HOME make git
// skip: the user's next git command may run with another environment.
func ReadOutside(home string, getenv func(string) string) Outside {
	var out Outside
	seen := map[string]bool{}
	add := func(f string) bool {
		if f == "" || seen[f] {
			return false
		}
		seen[f] = true
		out.Files = append(out.Files, f)
		return true
	}
	var read func(f string, depth int)
	read = func(f string, depth int) {
		if !filepath.IsAbs(f) || depth > maxIncludeDepth || !add(filepath.Clean(f)) {
			return
		}
		b, err := ReadFile(f)
		if err != nil {
			return
		}
		entries, _ := Parse(b)
		for _, e := range entries {
			switch {
			case e.Key == "core.hookspath" && e.Value != "":
				out.HooksPaths = append(out.HooksPaths, expandHome(home, e.Value))
			case isIncludePath(e.Key) && e.Value != "":
				read(includePath(home, f, e.Value), depth+1)
			}
		}
	}
	for _, s := range policy.GitHostConfig {
		read(policy.ExpandGitHost(s, home, getenv), 0)
	}
	for _, s := range policy.GitkStartup {
		add(policy.ExpandGitHost(s, home, getenv))
	}
	return out
}

// GlobalHooksPaths returns the core.hooksPath values of the configuration
// git reads besides a repository's own (ReadOutside's HooksPaths).
func GlobalHooksPaths(home string, getenv func(string) string) []string {
	return ReadOutside(home, getenv).HooksPaths
}

// Included are the files a repository's configuration file f includes
// (include.path and includeIf.*.path, whatever the condition), and what
// they include, each once, there or not (git reads one once it exists);
// hooks are the core.hooksPath values of those that exist. A file included from the git directory is often
// one of the working tree (include.path = ../project.gitconfig): it
// decides what git runs as config does.
func Included(home, f string) (files, hooks []string) {
	seen := map[string]bool{}
	var read func(f string, depth int)
	read = func(f string, depth int) {
		b, err := ReadFile(f)
		if err != nil {
			return
		}
		entries, _ := Parse(b)
		for _, e := range entries {
			switch {
			case e.Key == "core.hookspath" && e.Value != "":
				if depth > 0 {
					hooks = append(hooks, e.Value)
				}
			case isIncludePath(e.Key) && e.Value != "":
				inc := filepath.Clean(includePath(home, f, e.Value))
				if !filepath.IsAbs(inc) || depth >= maxIncludeDepth || seen[inc] {
					continue
				}
				seen[inc] = true
				files = append(files, inc)
				read(inc, depth+1)
			}
		}
	}
	read(f, 0)
	return files, hooks
}

// includePath is the file an include.path value v of the configuration
// file f names: "~/" is the home, a relative one is taken from f's
// directory.
func includePath(home, f, v string) string {
	inc := expandHome(home, v)
	if !filepath.IsAbs(inc) {
		inc = filepath.Join(filepath.Dir(f), inc)
	}
	return inc
}

// isIncludePath reports whether key is include.path or includeIf.<condition>.path.
func isIncludePath(key string) bool {
	if key == "include.path" {
		return true
	}
	rest, ok := strings.CutPrefix(key, "includeif.")
	return ok && strings.HasSuffix(rest, ".path")
}

// expandHome expands a leading "~/" (git's expand_user_path) to home.
func expandHome(home, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && home != "" {
		return filepath.Join(home, rest)
	}
	return p
}

// HooksDir is the directory a core.hooksPath value h names for a
// repository whose working tree has its top at top ("" when there is
// none, or it is not known): "~/" is the home, a relative value is taken
// from the top, where git runs hooks. "" when h is relative and there is
// no top. The path is as written, cleaned; links in it are the caller's
// to resolve.
func HooksDir(home, top, h string) string {
	h = expandHome(home, h)
	if !filepath.IsAbs(h) {
		if top == "" {
			return ""
		}
		h = filepath.Join(top, h)
	}
	return filepath.Clean(h)
}
