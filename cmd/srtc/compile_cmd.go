package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/artifact"
	"srt.dev/emit/seatbelt"
	"srt.dev/runtime/trust"
	"srt.dev/schema"
)

type compileCmd struct {
	osFlag
	Target string `enum:"all,linux,macos,windows" default:"all" help:"Target platform: linux, macos, windows, or all that are built (${enum})."`
	Out    string `short:"o" name:"out" default:"srt-plan" help:"Artifact directory to write." type:"path"`
	Home   string `help:"Write the concrete form for one home directory: replaces the symbolic HOME root in linux/bwrap.args."`
	Cwd    string `help:"Write the concrete form for one working directory: replaces the symbolic CWD root."`
	Check  bool   `help:"Write nothing; exit 1 if the artifact directory is not what compiling gives."`
	File   string `arg:"" name:"file" help:"Settings file to compile." type:"path"`
}

func (c *compileCmd) Help() string {
	return `Writes the artifact directory: plan.json (the compiled policy and a checksum of
every file), and for Linux linux/bwrap.args (the bubblewrap plan) and
linux/seccomp.<arch>.{bpf,txt} (the seccomp program and its disassembly),
for macOS macos/profile.sb (the Seatbelt profile; host paths and proxy ports
are sandbox-exec parameters), and for Windows windows/plan.json (the WFP
filters, account, ACL and token plan; srt does not execute it yet). The same
settings give the same bytes on every machine. linux and macos read paths
with the POSIX rules, windows with the Windows rules; --target all compiles
once for each family and leaves out, with a note, a family whose reading
fails or would misread the file's paths.`
}

func (c *compileCmd) Run(s streams) error {
	data, err := readFile(c.File)
	if err != nil {
		fmt.Fprintf(s.stderr, "srtc: %v\n", err)
		return exitError(exitUsage)
	}
	name := filepath.Base(c.File)
	if err := c.checkRules(s); err != nil {
		return err
	}
	var files artifact.Files
	if c.Target == "all" {
		files, err = c.all(s, name, data)
	} else {
		rules := schema.OSPosix
		if c.Target == string(artifact.Windows) {
			rules = schema.OSWindows
		}
		var p *policy.Policy
		if p, err = compileOrReport(s, name, data, rules); err != nil {
			return err
		}
		if rules == schema.OSPosix {
			noteWindowsSpellings(s, p, "")
		}
		files, err = artifact.Build(p, []artifact.Target{artifact.Target(c.Target)}, c.host())
	}
	var refused *seatbelt.Error
	if errors.As(err, &refused) {
		// A path the profile cannot express safely, named like a
		// diagnostic.
		if refused.Origin.Pos == "" {
			fmt.Fprintf(s.stderr, "%s: ", name)
		}
		fmt.Fprintln(s.stderr, refused)
		return exitError(exitFailure)
	}
	var status exitError
	if err != nil && !errors.As(err, &status) {
		// A target that is not built, or settings its emitter refuses
		// (the message names the entry).
		fmt.Fprintf(s.stderr, "srtc: %v\n", err)
		return exitError(exitFailure)
	}
	if err != nil {
		return err
	}
	if c.Home != "" || c.Cwd != "" {
		if files["windows/plan.json"] != nil {
			io.WriteString(s.stderr, "srtc: note: --home and --cwd apply to linux/bwrap.args; windows/plan.json stays symbolic (%USERPROFILE%, %CD%)\n")
		}
	}
	if c.Check {
		return c.check(s, files)
	}
	// The plan directory as the record names it; a compile writing the
	// same directory meanwhile waits, so that the record names the plan
	// left there. Where the record cannot be written, Trust says so below.
	planDir, dirErr := trust.PlanDir(c.Out)
	if dirErr == nil {
		if unlock, err := trust.Lock(); err == nil {
			defer unlock()
		}
	}
	for _, n := range files.Names() {
		path := filepath.Join(c.Out, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, files[n], 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(s.stdout, "%s: wrote %d files to %s\n", name, len(files), c.Out)
	// What the user compiled here is the one plan trusted to run here
	// (srt run --plan runs no other plan in this directory, and this one
	// in no other); inside a sandbox srt's state is read-only, and the
	// plan is not.
	err = dirErr
	if err == nil {
		err = trust.Trust(planDir, artifact.Digest(files["plan.json"]), "srtc compile")
	}
	if err != nil {
		fmt.Fprintf(s.stderr, "srtc: note: %s is not recorded as trusted on this machine (%v): srt run --plan refuses it until you review it and run srt trust %s\n", c.Out, err, c.Out)
	}
	return nil
}

// host is the host a concrete Linux plan is written for; the zero value
// keeps it symbolic.
func (c *compileCmd) host() artifact.Options {
	return artifact.Options{Home: c.Home, Cwd: c.Cwd}
}

// check compares the directory with what compiling gives: every file must
// be there with the same bytes, and no other file may sit in the
// directories srtc writes.
func (c *compileCmd) check(s streams, files artifact.Files) error {
	var stale []string
	for _, n := range files.Names() {
		got, err := os.ReadFile(filepath.Join(c.Out, filepath.FromSlash(n)))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, n+": missing")
		case err != nil:
			return err
		case !bytes.Equal(got, files[n]):
			stale = append(stale, n+": differs")
		}
	}
	for _, sub := range []string{".", "linux", "macos", "windows"} {
		entries, err := os.ReadDir(filepath.Join(c.Out, sub))
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := filepath.ToSlash(filepath.Join(sub, e.Name()))
			if !e.IsDir() && files[n] == nil {
				stale = append(stale, n+": not produced by this compile")
			}
		}
	}
	if len(stale) > 0 {
		for _, line := range stale {
			fmt.Fprintf(s.stdout, "%s/%s\n", c.Out, line)
		}
		fmt.Fprintf(s.stderr, "srtc: %s is stale: run 'srtc compile -o %s %s' and commit the result\n", c.Out, c.Out, c.File)
		return exitError(exitFailure)
	}
	fmt.Fprintf(s.stdout, "%s: up to date\n", c.Out)
	return nil
}

// compileOrReport compiles a settings file, printing its diagnostics on
// stderr (exit status 1) when it is invalid.
func compileOrReport(s streams, name string, data []byte, os schema.OS) (*policy.Policy, error) {
	p, diags, err := compiler.CompileFile(name, data, schema.Options{OS: os})
	if err != nil {
		return nil, err
	}
	if diags != nil {
		for _, d := range diags {
			fmt.Fprintln(s.stderr, d)
		}
		return nil, exitError(exitFailure)
	}
	return p, nil
}
