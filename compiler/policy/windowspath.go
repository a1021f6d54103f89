package policy

import (
	"fmt"
	"strings"
)

// WindowsPath is one path entry read with the Windows rules.
type WindowsPath struct {
	// Path is symbolic and clean, in the form Windows documents:
	// "/" separators, upper-case drive letter, "//" for UNC.
	Path Path
	// Pattern is set when the entry is not literal and contains * or ?.
	Pattern bool
	// TrailingSeparator is set when the entry ended in \ or / after a
	// name (a deny then creates a directory placeholder).
	TrailingSeparator bool
	// Skip is set for a literal entry containing * or ?: no Windows name
	// can contain them, so it names nothing (the reference skips it).
	Skip bool
}

// The environment variables a Windows path may start with, upper case, and
// the roots they stand for (docs/reference.md#windows-session).
var windowsVars = []struct{ name, root string }{
	{"%USERPROFILE%", string(Home)},
	{"%HOMEDRIVE%", homeDriveMarker},
	{"%HOMEPATH%", homePathMarker},
}

// NormalizeWindows reads a path entry the Windows way
// (docs/reference.md#windows-session and docs/reference.md#windows-paths):
//
//   - %USERPROFILE%, %HOMEDRIVE% and %HOMEPATH% (any case) at the start
//     become symbolic roots, as do "~" and "~\" or "~/";
//   - the \\?\ and \\?\UNC\ prefixes go; \\server\share stays UNC;
//   - the drive letter becomes upper case; \ and / are both separators;
//   - a relative path starts at ${CWD};
//   - runs of separators and "." segments collapse; a trailing separator
//     goes but is recorded; a trailing "\**" goes unless literal;
//   - ".." stays, as in the POSIX reading: only the host can fold it.
//
// It refuses what has no meaning without the host's current drive: a path
// rooted without a drive ("\x", "/x", "%HOMEPATH%\x" alone) and a
// drive-relative path ("C:x"), and a %VAR% root anywhere but at the start.
// The error says what to write instead.
func NormalizeWindows(spelling string, literal bool) (WindowsPath, error) {
	root, rest := "", spelling
	for {
		matched := false
		for _, v := range windowsVars {
			if len(rest) >= len(v.name) && strings.EqualFold(rest[:len(v.name)], v.name) {
				root, rest, matched = root+v.root, rest[len(v.name):], true
			}
		}
		if !matched {
			break
		}
	}
	switch {
	case root != "":
		// The roots that name a directory: %USERPROFILE%, %HOMEDRIVE%
		// (a drive) and %HOMEDRIVE%%HOMEPATH%; any other run of them
		// (%USERPROFILE%%USERPROFILE%) names no path and would protect
		// nothing.
		switch Root(root) {
		case Home, HomeDrive, HomeDrivePath, homePathMarker:
		default:
			//lint:ignore ST1005 the message ends with the variable to write
			return WindowsPath{}, fmt.Errorf("%q starts with %%VAR%% roots that name no directory together: write %%USERPROFILE%%\\..., %%HOMEDRIVE%%\\... or %%HOMEDRIVE%%%%HOMEPATH%%\\...", spelling)
		}
		if root == homePathMarker {
			return WindowsPath{}, fmt.Errorf("%%HOMEPATH%% has no drive: write %%HOMEDRIVE%%%%HOMEPATH%% or %%USERPROFILE%%")
		}
		if Root(root) == HomeDrive && rest == "" {
			return WindowsPath{}, fmt.Errorf("%%HOMEDRIVE%% alone is a drive, not a directory: write %%HOMEDRIVE%%\\ or %%USERPROFILE%%")
		}
		if rest != "" && !isSep(rest[0]) {
			return WindowsPath{}, fmt.Errorf("a %%VAR%% root must be followed by \\ (got %q)", spelling)
		}
	case rest == "~" || strings.HasPrefix(rest, `~\`) || strings.HasPrefix(rest, "~/"):
		root, rest = string(Home), rest[1:]
	case strings.HasPrefix(rest, `\\?\UNC\`):
		root, rest = "/", `\`+rest[len(`\\?\UNC`):]
	case strings.HasPrefix(rest, `\\?\`):
		rest = rest[len(`\\?\`):]
		if len(rest) < 3 || rest[1] != ':' || !isLetter(rest[0]) || !isSep(rest[2]) {
			return WindowsPath{}, fmt.Errorf("%q: a \\\\?\\ path continues with a drive (\\\\?\\C:\\…) or UNC\\", spelling)
		}
	}
	for _, v := range windowsVars {
		if i := strings.Index(strings.ToUpper(rest), v.name); i >= 0 {
			return WindowsPath{}, fmt.Errorf("%s may only start a path (found at byte %d)", v.name, len(spelling)-len(rest)+i)
		}
	}
	if root == "" {
		switch {
		case len(rest) >= 2 && isSep(rest[0]) && isSep(rest[1]):
			root, rest = "/", rest[1:] // UNC: the root is "/" + "/server/share/..."
		case len(rest) >= 2 && rest[1] == ':' && isLetter(rest[0]):
			if len(rest) == 2 || !isSep(rest[2]) {
				return WindowsPath{}, fmt.Errorf("%q is relative to the current directory of drive %c: write %c:\\ and the full path", spelling, upper(rest[0]), upper(rest[0]))
			}
			root, rest = string(upper(rest[0]))+":", rest[2:]
		case rest != "" && isSep(rest[0]):
			return WindowsPath{}, fmt.Errorf("%q has no drive letter: on Windows it means that path on the working directory's drive; write the drive (C:%s), or keep this file for linux and macos", spelling, strings.ReplaceAll(rest, "/", `\`))
		default:
			root = string(Cwd)
		}
	}
	var segs []string
	for _, s := range strings.FieldsFunc(rest, func(r rune) bool { return r == '/' || r == '\\' }) {
		if s != "." {
			segs = append(segs, s)
		}
	}
	out := WindowsPath{TrailingSeparator: len(segs) > 0 && isSep(rest[len(rest)-1])}
	if !literal {
		for len(segs) > 0 && segs[len(segs)-1] == "**" {
			segs, out.TrailingSeparator = segs[:len(segs)-1], false
		}
	}
	r := Root(root)
	switch {
	case root == "/":
		r = UNC
	case len(root) == 2 && root[1] == ':':
		r = driveRoot(root[0])
	}
	out.Path = Path{root: r, rel: strings.Join(segs, "/")}
	if root == "/" && len(segs) < 2 {
		return WindowsPath{}, fmt.Errorf("%q is not a UNC path: write \\\\server\\share\\…", spelling)
	}
	if root == "/" && strings.ContainsAny(segs[0]+segs[1], "*?") {
		return WindowsPath{}, fmt.Errorf("%q: the server and share of a UNC path cannot contain * or ?", spelling)
	}
	glob := strings.ContainsAny(out.Path.rel, "*?")
	out.Pattern = glob && !literal
	out.Skip = glob && literal
	return out, nil
}

func isSep(b byte) bool    { return b == '/' || b == '\\' }
func isLetter(b byte) bool { return ('a' <= b && b <= 'z') || ('A' <= b && b <= 'Z') }
func upper(b byte) byte    { return strings.ToUpper(string(b))[0] }
