package wfp

import (
	"strings"

	"srt.dev/compiler/policy"
)

// The symbolic roots as the plan spells them: the environment variables a
// Windows user knows, and %CD% (cmd.exe's name) for the working directory.
// %HOMEDRIVE%%HOMEPATH% first: it starts with %HOMEDRIVE%.
var rootSpellings = []struct{ sym, win string }{
	{policy.HomeDrive + policy.HomePath, "%HOMEDRIVE%%HOMEPATH%"},
	{policy.Home, "%USERPROFILE%"},
	{policy.Cwd, "%CD%"},
	{policy.HomeDrive, "%HOMEDRIVE%"},
}

// spellRoot writes the symbolic root p starts with, if any, the Windows
// way. Only the root: a name below it that looks like a root ("${HOME}"
// in ${CWD}/${HOME}, a file of that name) is a name.
func spellRoot(p string) string {
	for _, r := range rootSpellings {
		if p == r.sym || strings.HasPrefix(p, r.sym+"/") {
			return r.win + p[len(r.sym):]
		}
	}
	return p
}

// win renders a policy path (Windows reading: "/" separators) in Windows
// spelling: C:\x, \\server\share\x, %USERPROFILE%\x.
func win(p string) string {
	return strings.ReplaceAll(spellRoot(p), "/", `\`)
}

// winRule renders a rule's path, with the trailing separator the entry
// was written with (it decides the placeholder's kind).
func winRule(r policy.PathRule) string {
	s := win(r.Path)
	if r.TrailingSeparator && !strings.HasSuffix(s, `\`) {
		s += `\`
	}
	return s
}

// slashes renders a policy path with forward slashes, for environment
// values and git configuration (msys2 tools mangle backslashes).
func slashes(p string) string {
	return strings.ReplaceAll(spellRoot(p), `\`, "/")
}

// under reports whether a is b or lies beneath b, comparing names the
// Windows way (ignoring case). Only spellings with the same root compare:
// how %USERPROFILE% relates to C:\Users is a fact of the host.
func under(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b {
		return true
	}
	if !strings.HasSuffix(b, "/") {
		b += "/"
	}
	return strings.HasPrefix(a, b)
}

// parent returns the directory holding p, or "" for a root (a drive,
// a UNC share, a symbolic root).
func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	dir := p[:i]
	switch {
	case strings.HasSuffix(dir, ":") || dir == policy.HomeDrive: // C:/x → C:/
		if i == len(p)-1 {
			return "" // p is C:/
		}
		return dir + "/"
	case strings.HasPrefix(p, "//") && strings.Count(dir, "/") < 3:
		return "" // \\server\share is the root
	}
	return dir
}

// creatable lists the ancestors of p, nearest the root first, that a
// placeholder chain may have to create: every directory between p and
// its root, the root itself excluded.
func creatable(p string) []string {
	var out []string
	for a := parent(p); a != "" && parent(a) != ""; a = parent(a) {
		out = append([]string{a}, out...)
	}
	return out
}
