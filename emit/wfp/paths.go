package wfp

import (
	"strings"

	"srt.dev/compiler/policy"
)

// The symbolic roots as the plan spells them: the environment variables a
// Windows user knows, and %CD% (cmd.exe's name) for the working directory.
var rootSpellings = map[policy.Root]string{
	policy.HomeDrivePath: "%HOMEDRIVE%%HOMEPATH%",
	policy.Home:          "%USERPROFILE%",
	policy.Cwd:           "%CD%",
	policy.HomeDrive:     "%HOMEDRIVE%",
}

// spellRoot writes p with its symbolic root, if it has one, the Windows
// way; only the root (see policy.Path.Spell).
func spellRoot(p policy.Path) string {
	if sp, ok := rootSpellings[p.Root()]; ok {
		return p.Spell(sp)
	}
	return p.String()
}

// win renders a policy path (Windows reading: "/" separators) in Windows
// spelling: C:\x, \\server\share\x, %USERPROFILE%\x.
func win(p policy.Path) string {
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
func slashes(p policy.Path) string {
	return strings.ReplaceAll(spellRoot(p), `\`, "/")
}

// under reports whether a is b or lies beneath b, comparing names the
// Windows way (ignoring case). Only paths from the same root compare:
// how %USERPROFILE% relates to C:\Users is a fact of the host.
func under(a, b policy.Path) bool { return fold(b).Contains(fold(a)) }

// fold is p with its names lower-cased; its root is as it is (a drive
// letter is upper case in every policy path).
func fold(p policy.Path) policy.Path { return p.Root().Join(strings.ToLower(p.Rel())) }

// parent returns the directory holding p; ok is false for a root (a
// drive, a UNC share, a symbolic root).
func parent(p policy.Path) (policy.Path, bool) {
	if p.Root() == policy.UNC && strings.Count(p.Rel(), "/") < 2 {
		return policy.Path{}, false // \\server\share is the root
	}
	return p.Parent()
}

// creatable lists the ancestors of p, nearest the root first, that a
// placeholder chain may have to create: every directory between p and
// its root, the root itself excluded.
func creatable(p policy.Path) []policy.Path {
	var out []policy.Path
	for a, ok := parent(p); ok; a, ok = parent(a) {
		if _, ok := parent(a); !ok {
			break
		}
		out = append([]policy.Path{a}, out...)
	}
	return out
}
