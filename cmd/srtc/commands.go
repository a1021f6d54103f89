package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/alecthomas/kong"

	"srt.dev/internal/buildversion"
	"srt.dev/schema"
)

// cli is the grammar of srtc's command line.
type cli struct {
	Version  kong.VersionFlag `help:"Print the version and exit."`
	Validate validateCmd      `cmd:"" help:"Check settings files against the grammar; with no FILE, ~/.srt-settings.json."`
	Compile  compileCmd       `cmd:"" help:"Compile a settings file into reviewable, deterministic sandbox artifacts."`
	Policy   policyCmd        `cmd:"" help:"Print the compiled policy of a settings file as JSON (what srt enforces)."`
	Explain  explainCmd       `cmd:"" help:"Show what a policy exposes on each target, or answer --read/--write/--connect/--unix-socket questions."`
	Lint     lintCmd          `cmd:"" help:"Find risky or pointless rules (SRT1xx codes); exit 1 on an error-level finding."`
	Diff     diffCmd          `cmd:"" help:"Compare two policies by what they allow per target; exit 3 when NEW widens access."`
	Test     testCmd          `cmd:"" help:"Check a policy test file (.srt-settings.test) against the compiled policy."`
	Schema   schemaCmd        `cmd:"" help:"Print the settings grammar, as CUE or as JSON Schema for editors."`
	Defaults defaultsCmd      `cmd:"" help:"Print the built-in settings srt uses when ~/.srt-settings.json does not exist."`
}

// osFlag selects the operating system whose path rules apply.
type osFlag struct {
	OS string `name:"os" enum:"host,posix,windows" default:"host" help:"Path rules to apply: host, posix or windows (${enum})."`
}

func (f osFlag) rules() schema.OS {
	switch f.OS {
	case "posix":
		return schema.OSPosix
	case "windows":
		return schema.OSWindows
	}
	return schema.HostOS()
}

// streams are the standard streams a command uses.
type streams struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// exitError carries an exit status to run after the command has printed
// everything it has to say.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// Exit statuses (cmd/go's convention).
const (
	exitOK      = 0
	exitFailure = 1 // an invalid settings file
	exitUsage   = 2 // bad usage or an I/O error
)

// kongExit is how kong asks to exit (after --help, --version or a parse
// error); run turns it back into a return value.
type kongExit int

// run is srtc with its arguments and streams; it returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (status int) {
	var c cli
	parser, err := kong.New(&c,
		kong.Name("srtc"),
		kong.Description("srtc checks, compiles and reviews srt sandbox settings (.srt-settings.json)."),
		kong.Vars{"version": buildversion.Line("srtc", version)},
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		panic(err) // the grammar above is wrong
	}
	defer func() {
		if r := recover(); r != nil {
			code, ok := r.(kongExit)
			if !ok {
				panic(r)
			}
			if code != 0 {
				code = exitUsage
			}
			status = int(code)
		}
	}()
	ctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "srtc: %v\n", err)
		fmt.Fprintf(stderr, "Run 'srtc --help' for usage.\n")
		return exitUsage
	}
	ctx.Bind(streams{stdin, stdout, stderr})
	if err := ctx.Run(); err != nil {
		var code exitError
		if errors.As(err, &code) {
			return int(code)
		}
		fmt.Fprintf(stderr, "srtc: %v\n", err)
		return exitUsage
	}
	return exitOK
}
