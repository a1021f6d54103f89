package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"srt.dev/review/query"
	"srt.dev/review/source"
	"srt.dev/schema"
	"srt.dev/schema/builtin"
)

// reviewFlags are the flags the review commands (explain, lint, diff,
// test) share.
type reviewFlags struct {
	osFlag
	Target string `enum:"all,linux,macos,windows" default:"all" help:"Answer for one target platform, or all (${enum})."`
}

// rules are the path rules a review reads the file with: --os when given;
// otherwise the Windows rules for --target windows (as srtc compile does),
// else the host's. (With --target all one reading serves every target:
// review a file spelled for Windows with --target windows.)
func (f reviewFlags) rules() schema.OS {
	if f.OS == "host" && f.Target == "windows" {
		return schema.OSWindows
	}
	return f.osFlag.rules()
}

func (f reviewFlags) targets() []query.Target {
	ts, _ := query.ParseTargets(f.Target) // kong checked the enum
	return ts
}

// loadSource reads and compiles a settings file for review. An empty name
// is ~/.srt-settings.json, or the built-in defaults when it does not exist
// (as srt does). "REV:path" is read from git when no such file exists. An
// invalid file prints its diagnostics (exit 1); an unreadable one exit 2.
func loadSource(s streams, name string, rules schema.OS) (*query.Source, string, error) {
	data, label, err := readSettings(name)
	if err != nil {
		fmt.Fprintf(s.stderr, "srtc: %v\n", err)
		return nil, "", exitError(exitUsage)
	}
	if name == "" {
		sayDefault(s, label)
	}
	src, diags, err := source.Load(label, data, schema.Options{OS: rules})
	if err != nil {
		return nil, "", err
	}
	if diags != nil {
		for _, d := range diags {
			fmt.Fprintln(s.stderr, d)
		}
		return nil, "", exitError(exitFailure)
	}
	// Answers about "${CWD}/C:\x" would look like answers: say so.
	if rules == schema.OSPosix && noteWindowsSpellings(s, src.Policy, "the answers read ") {
		fmt.Fprintln(s.stderr, "  (review a file written for Windows with --target windows)")
	}
	return src, label, nil
}

// sayDefault says which file a command checks when none was named: every
// command of srtc and srt takes ~/.srt-settings.json then, the file srt
// runs with (a project's own file is named explicitly, in srtc as in srt
// --settings), or the built-in defaults when it does not exist.
func sayDefault(s streams, label string) {
	if label == schema.DefaultSettingsName {
		fmt.Fprintf(s.stderr, "srtc: %s does not exist: checking the built-in defaults srt uses then (name a file to check another)\n", homeSettings())
		return
	}
	fmt.Fprintf(s.stderr, "srtc: checking %s, the file srt uses without --settings (name a file to check another)\n", label)
}

// homeSettings is the default settings file, ~/.srt-settings.json.
func homeSettings() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return "~/.srt-settings.json"
	}
	return filepath.Join(home, ".srt-settings.json")
}

// readSettings returns a settings file's bytes and the name to report it
// by.
func readSettings(name string) ([]byte, string, error) {
	if name == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, "", fmt.Errorf("cannot find the home directory for the default settings file: %v; name a file", err)
		}
		name = filepath.Join(home, ".srt-settings.json")
		if _, err := os.Stat(name); errors.Is(err, fs.ErrNotExist) {
			return []byte(schema.DefaultSettingsJSON), schema.DefaultSettingsName, nil
		}
	}
	if _, err := os.Stat(name); err != nil && strings.Contains(name, ":") {
		data, err := gitShow(name)
		return data, name, err
	}
	data, err := readFile(name)
	return data, name, err
}

// gitShow reads REV:path from the git repository of the working directory.
func gitShow(spec string) ([]byte, error) {
	out, err := exec.Command("git", "show", "--end-of-options", spec).Output()
	if err != nil {
		msg := err.Error()
		var ee *exec.ExitError
		if errors.As(err, &ee) && len(ee.Stderr) > 0 {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return nil, fmt.Errorf("%s: no such file, and git cannot show it as REV:path: %s", spec, msg)
	}
	if len(out) > schema.MaxFileSize {
		return nil, fmt.Errorf("%s: %s", spec, builtin.TooLarge(int64(len(out))))
	}
	return out, nil
}

// symbolic rewrites a query path under this host's home or working
// directory into the symbolic form (~/x, ./x), so that a path the shell
// expanded ("~/.ssh" arrives as /home/me/.ssh) meets rules written for
// ${HOME} and ${CWD}. Used only when no --home or --cwd is given.
func symbolic(p string) string {
	if !filepath.IsAbs(p) {
		return p
	}
	p = filepath.Clean(p)
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	// The longer directory first: a project usually lies in the home.
	dirs := []struct{ dir, sym string }{{cwd, "."}, {home, "~"}}
	if len(home) > len(cwd) {
		dirs[0], dirs[1] = dirs[1], dirs[0]
	}
	for _, d := range dirs {
		if d.dir == "" || d.dir == "/" {
			continue
		}
		if p == d.dir {
			return d.sym
		}
		if rest, ok := strings.CutPrefix(p, d.dir+string(filepath.Separator)); ok {
			return d.sym + "/" + filepath.ToSlash(rest)
		}
	}
	return p
}
