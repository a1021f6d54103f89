package main

import (
	"fmt"
	"regexp"
	"strings"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/artifact"
	"srt.dev/schema"
)

// checkRules refuses an --os that contradicts the target: the target
// decides how paths are read (linux and macos: POSIX; windows: Windows).
func (c *compileCmd) checkRules(s streams) error {
	if c.OS == "host" {
		return nil
	}
	if c.Target == "all" {
		fmt.Fprintln(s.stderr, "srtc: --os does not apply to --target all: linux and macos read paths with the POSIX rules, windows with the Windows rules")
		return exitError(exitUsage)
	}
	if want := map[string]string{"linux": "posix", "macos": "posix", "windows": "windows"}[c.Target]; want != c.OS {
		fmt.Fprintf(s.stderr, "srtc: --target %s reads paths with the %s rules; drop --os %s\n", c.Target, want, c.OS)
		return exitError(exitUsage)
	}
	return nil
}

// all compiles the file twice, once per family of path rules: the POSIX
// reading for linux and macos, the Windows reading for
// windows. A family whose reading fails, or whose reading would misread
// paths spelled for the other family, is left out with a note saying
// which entries and why; when both are left out the compile fails.
func (c *compileCmd) all(s streams, name string, data []byte) (artifact.Files, error) {
	posix, pdiags, err := compiler.CompileFile(name, data, schema.Options{OS: schema.OSPosix})
	if err != nil {
		return nil, err
	}
	if pdiags != nil {
		// Invalid for the grammar: the same for both readings.
		for _, d := range pdiags {
			fmt.Fprintln(s.stderr, d)
		}
		return nil, exitError(exitFailure)
	}
	win, wdiags, err := compiler.CompileFile(name, data, schema.Options{OS: schema.OSWindows})
	if err != nil {
		return nil, err
	}
	if wdiags != nil {
		fmt.Fprintf(s.stderr, "srtc: note: not writing windows/plan.json: %s reads differently on Windows:\n", name)
		for _, d := range wdiags {
			fmt.Fprintf(s.stderr, "  %s\n", d)
		}
		fmt.Fprintln(s.stderr, "  (~ and relative paths read the same on every platform; keep platform-specific absolute paths in separate files)")
		win = nil
	}
	if noteWindowsSpellings(s, posix, "not writing the linux and macos artifacts: ") {
		if win == nil {
			fmt.Fprintf(s.stderr, "srtc: %s has paths that neither reading accepts as meant; compile with --target linux or --target windows\n", name)
			return nil, exitError(exitFailure)
		}
		return artifact.Build(win, []artifact.Target{artifact.Windows}, artifact.Options{})
	}
	return artifact.BuildSplit(posix, win, []artifact.Target{artifact.Linux, artifact.MacOS}, c.host())
}

// windowsSpelled matches what the POSIX reading makes, below ${CWD}, of
// a Windows spelling: a drive letter or %USERPROFILE%-style root that
// became a relative name, or a backslash in a path read as relative (~\x,
// src\x). In an absolute POSIX path a backslash is only a character of a
// name.
var windowsSpelled = regexp.MustCompile(`(?i)^(([a-z]:|%(userprofile|homedrive|homepath)%)|.*\\)`)

// noteWindowsSpellings prints a note for every path of a POSIX reading that
// looks spelled for Windows, so that a Linux plan never misreads one
// silently. It reports whether there was any.
func noteWindowsSpellings(s streams, p *policy.Policy, prefix string) bool {
	var found []string
	fs := p.Filesystem
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks, p.Network.AllowUnixSockets} {
		for _, r := range l {
			if r.Origin.Pos != "" && r.Path.Root() == policy.Cwd && windowsSpelled.MatchString(r.Path.Rel()) {
				found = append(found, fmt.Sprintf("  %s: %s: read as %s", r.Origin.Pos, r.Origin.Key, r.Path))
			}
		}
	}
	if len(found) == 0 {
		return false
	}
	fmt.Fprintf(s.stderr, "srtc: note: %spaths spelled for Windows, which the POSIX rules read as names:\n%s\n", prefix, strings.Join(found, "\n"))
	return true
}
