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
	w := includeWalk{home: home, seen: map[string]bool{},
		file:  func(f string, _ int) { out.Files = append(out.Files, f) },
		hooks: func(v string, _ int) { out.HooksPaths = append(out.HooksPaths, expandHome(home, v)) },
	}
	for _, s := range policy.GitHostConfig {
		w.read(policy.ExpandGitHost(s, home, getenv), 0)
	}
	for _, s := range policy.GitkStartup {
		if f := policy.ExpandGitHost(s, home, getenv); f != "" && !w.seen[f] {
			w.seen[f] = true
			out.Files = append(out.Files, f)
		}
	}
	return out
}

// includeWalk reads configuration files and what they include
// (include.path and includeIf.*.path, whatever the condition), each
// once, up to maxIncludeDepth: file is called for each file reached,
// there or not (git reads one once it exists), hooks for each
// core.hooksPath of one that exists, with its depth (0 for where the
// walk started).
type includeWalk struct {
	home  string
	seen  map[string]bool
	file  func(f string, depth int)
	hooks func(v string, depth int)
}

func (w *includeWalk) read(f string, depth int) {
	f = filepath.Clean(f)
	if !filepath.IsAbs(f) || depth > maxIncludeDepth || w.seen[f] {
		return
	}
	w.seen[f] = true
	w.file(f, depth)
	w.entries(f, depth)
}

// entries reads f's core.hooksPath and includes, f itself not counted as
// reached (a file that includes it back reaches it).
func (w *includeWalk) entries(f string, depth int) {
	b, err := ReadFile(f)
	if err != nil {
		return
	}
	entries, _ := Parse(b)
	for _, e := range entries {
		switch {
		case e.Key == "core.hookspath" && e.Value != "":
			w.hooks(e.Value, depth)
		case isIncludePath(e.Key) && e.Value != "":
			w.read(includePath(w.home, f, e.Value), depth+1)
		}
	}
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
	w := includeWalk{home: home, seen: map[string]bool{},
		file: func(f string, _ int) { files = append(files, f) },
		hooks: func(v string, depth int) {
			if depth > 0 {
				hooks = append(hooks, v)
			}
		},
	}
	w.entries(f, 0)
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
