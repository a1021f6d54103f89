package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"srt.dev/schema/builtin"
)

// projectFile is the name of a project's own settings file.
const projectFile = ".srt-settings.json"

// maxShownCommand bounds the command line the project notice repeats.
const maxShownCommand = 160

// findProjectSettings returns the .srt-settings.json of the project srt
// runs in: in the working directory cwd, else at the top of its git
// working tree (the nearest directory above with a .git); "" when there
// is none. srt never reads it unless --settings names it: a checkout
// must not choose its own policy.
func findProjectSettings(cwd string) string {
	if isFile(filepath.Join(cwd, projectFile)) {
		return filepath.Join(cwd, projectFile)
	}
	for d := cwd; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if p := filepath.Join(d, projectFile); isFile(p) {
				return p
			}
			return ""
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// projectSettingsPaths are the project settings files a later run in cwd
// could find (findProjectSettings): the one in cwd and in each directory
// above, there or not, since a command that may write there could add a
// .git beside one. srt keeps them as its own (srtState): one that exists
// is read-only in the sandbox, and one made during the run is moved into
// the quarantine, so that no sandbox writes the file the project notice
// tells the user to run with.
func projectSettingsPaths(cwd string) []string {
	var out []string
	for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
		out = append(out, filepath.Join(d, projectFile))
		if d == filepath.Dir(d) {
			return out
		}
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// noteProjectSettings says, once, that srt left out the project's
// settings file project for the file in use (name, as loadSettings
// names it), and how to use the project's; args are srt's arguments,
// repeated in that command. It says nothing when project is the file in
// use.
func noteProjectSettings(w io.Writer, project, name, cwd string, args []string) {
	if inUse, err := os.Stat(name); err == nil {
		if fi, err := os.Stat(project); err == nil && os.SameFile(fi, inUse) {
			return
		}
	}
	shown := project
	if rel, err := filepath.Rel(cwd, project); err == nil {
		shown = rel
		if !strings.HasPrefix(rel, "..") {
			shown = "./" + rel
		}
	}
	using := name
	if name == builtin.SettingsName {
		using = "the built-in defaults (there is no ~/.srt-settings.json)"
	}
	use := "srt --settings " + shellWord(shown)
	if line, ok := shellCommand(append([]string{"srt", "--settings", shown}, args...)); ok {
		use = line
	} else {
		use += " and the same arguments"
	}
	// Whoever wrote the project's file chose its rules: what it allows is
	// to be read before it is used, beyond the file in use when there is
	// one.
	review := "srtc explain " + shellWord(shown) + " (what it allows)"
	if name != builtin.SettingsName {
		if line, ok := shellCommand([]string{"srtc", "diff", name, shown}); ok {
			review += ", " + line + " (what it allows beyond the file in use)"
		}
	}
	fmt.Fprintf(w, "srt: this project's %s is not in use: srt runs with %s, and reads a project's settings file only when --settings names it, so that a checkout cannot choose its own policy. Review it before using it: %s. To use it: %s\n", shown, using, review, use)
}

// shellCommand writes words as a POSIX shell reads them back, on one
// line of at most maxShownCommand bytes, else ok is false.
func shellCommand(words []string) (line string, ok bool) {
	quoted := make([]string, len(words))
	for i, w := range words {
		if strings.ContainsFunc(w, func(r rune) bool { return !unicode.IsPrint(r) }) {
			return "", false
		}
		quoted[i] = shellWord(w)
	}
	line = strings.Join(quoted, " ")
	return line, len(line) <= maxShownCommand
}

// shellWord quotes w for a POSIX shell unless it needs no quotes.
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
