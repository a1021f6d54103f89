package gitconfig

import (
	"path/filepath"
	"strings"
)

// maxIncludeDepth bounds the include.path chains followed (git's own
// limit is 10).
const maxIncludeDepth = 10

// GlobalHooksPaths returns the core.hooksPath values of the configuration
// git reads besides a repository's own: the system's (/etc/gitconfig,
// $GIT_CONFIG_SYSTEM) and the user's ($XDG_CONFIG_HOME/git/config,
// ~/.gitconfig, $GIT_CONFIG_GLOBAL), and every file they include
// (include.path and includeIf.*.path, whatever the condition: a hooks
// directory protected that git does not use costs nothing, one missed is
// a hole). getenv reads srt's environment (nil: none). Each value is as
// HooksDir takes it: an absolute one names one directory, a relative one
// a directory in every working tree. srt's environment decides which
// files these are; all of them are read, whatever GIT_CONFIG_NOSYSTEM
// says, for the same reason.
func GlobalHooksPaths(home string, getenv func(string) string) []string {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	files := []string{"/etc/gitconfig"}
	if f := getenv("GIT_CONFIG_SYSTEM"); f != "" {
		files = append(files, f)
	}
	if home != "" {
		xdg := getenv("XDG_CONFIG_HOME")
		if xdg == "" {
			xdg = filepath.Join(home, ".config")
		}
		files = append(files, filepath.Join(xdg, "git", "config"), filepath.Join(home, ".gitconfig"))
	}
	if f := getenv("GIT_CONFIG_GLOBAL"); f != "" {
		files = append(files, f)
	}
	var out []string
	seen := map[string]bool{}
	var read func(f string, depth int)
	read = func(f string, depth int) {
		f = expandHome(home, f)
		if !filepath.IsAbs(f) || seen[f] || depth > maxIncludeDepth {
			return
		}
		seen[f] = true
		b, err := ReadFile(f)
		if err != nil {
			return
		}
		entries, _ := Parse(b)
		for _, e := range entries {
			switch {
			case e.Key == "core.hookspath" && e.Value != "":
				out = append(out, expandHome(home, e.Value))
			case isIncludePath(e.Key) && e.Value != "":
				// Relative to the including file's directory.
				inc := expandHome(home, e.Value)
				if !filepath.IsAbs(inc) {
					inc = filepath.Join(filepath.Dir(f), inc)
				}
				read(inc, depth+1)
			}
		}
	}
	for _, f := range files {
		read(f, 0)
	}
	return out
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
