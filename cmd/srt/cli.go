package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit"
	"srt.dev/runtime/sandbox"
	"srt.dev/runtime/violations"
	"srt.dev/schema/builtin"
)

const usage = `Usage: srt [options] [--] command [args...]
       srt [options] -c 'shell command'
       srt run --plan DIR [--dry-run] [options] [--] command [args...]
       srt doctor

Runs the command in a sandbox: it can read, write and reach only what the
settings file allows (see 'srtc validate' and 'srtc compile').

Options (recognised before the first command word or "--"):
  -s, --settings FILE   settings file (default: ~/.srt-settings.json; when that
                        file does not exist, the built-in defaults apply:
                        no network, no writes outside the scratch paths)
  -c CMD                run CMD with /bin/sh -c
  --control-fd N        read new settings from descriptor N (>= 3) while the
                        command runs: one JSON settings document per line,
                        each replacing the whole configuration; the network
                        rules apply to the next connection, file-system
                        rules cannot change in a running sandbox
  --violations          after the command, print the connections the
                        sandbox refused as a <sandbox_violations> block on
                        stderr
  --audit-log FILE      append every network decision, allowed or refused,
                        to FILE as JSON lines
  -d, --debug           debug lines on stderr (also: SRT_DEBUG=1)
  -h, --help            this help
  -V, --version         the version

srt run runs a directory written by 'srtc compile' (it checks the files'
checksums first), with the options above but --settings; --dry-run prints
the bubblewrap command line instead.
srt doctor checks what this host allows and says how to fix what it does not.
To run a program called run or doctor, write srt -- run.

Exit status: the command's; 128+N when signal N killed it; 1 when srt
itself fails (invalid settings, no bubblewrap, ...).
`

type options struct {
	settings   string
	shellCmd   string
	debug      bool
	controlFD  int // 0: none
	violations bool
	auditLog   string
	argv       []string
	// srt run: the artifact directory, and --dry-run.
	plan   string
	dryRun bool
}

// parse reads srt's own options up to "--" or the first command word;
// plan is set for "srt run", whose options are --plan and --dry-run
// instead of --settings.
func parse(args []string, plan bool) (*options, error, bool) {
	o := &options{debug: os.Getenv("SRT_DEBUG") != "" && os.Getenv("SRT_DEBUG") != "0" && os.Getenv("SRT_DEBUG") != "false"}
	for i := 0; i < len(args); i++ {
		a := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s needs a value", a)
			}
			i++
			return args[i], nil
		}
		var err error
		switch {
		case a == "--":
			o.argv = args[i+1:]
			return o, nil, false
		case a == "-h" || a == "--help":
			return o, nil, true
		case a == "-V" || a == "--version":
			fmt.Println(version)
			return nil, nil, true
		case a == "-d" || a == "--debug":
			o.debug = true
		case plan && (a == "-s" || a == "--settings" || strings.HasPrefix(a, "--settings=")):
			return nil, errors.New("srt run runs the policy compiled in the plan; --settings does not apply (compile the settings with srtc compile)"), false
		case a == "-s" || a == "--settings":
			o.settings, err = value()
		case strings.HasPrefix(a, "--settings="):
			o.settings = strings.TrimPrefix(a, "--settings=")
		case plan && a == "--plan":
			o.plan, err = value()
		case plan && strings.HasPrefix(a, "--plan="):
			o.plan = strings.TrimPrefix(a, "--plan=")
		case plan && a == "--dry-run":
			o.dryRun = true
		case a == "-c":
			o.shellCmd, err = value()
		case a == "--control-fd" || strings.HasPrefix(a, "--control-fd="):
			v, ok := strings.CutPrefix(a, "--control-fd=")
			if !ok {
				v, err = value()
			}
			if err == nil {
				o.controlFD, err = parseFD(v)
			}
		case a == "--violations":
			o.violations = true
		case a == "--audit-log":
			o.auditLog, err = value()
		case strings.HasPrefix(a, "--audit-log="):
			o.auditLog = strings.TrimPrefix(a, "--audit-log=")
		case strings.HasPrefix(a, "-") && a != "-":
			return nil, fmt.Errorf("unknown option %s (put the command after --)", a), false
		default:
			o.argv = args[i:]
			return o, nil, false
		}
		if err != nil {
			return nil, err, false
		}
	}
	return o, nil, false
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	plan := false
	if len(args) > 0 {
		switch args[0] {
		case "doctor":
			return doctor(stdout)
		case "run":
			plan, args = true, args[1:]
		}
	}
	o, err, exit := parse(args, plan)
	if exit {
		if o != nil {
			fmt.Fprint(stdout, usage)
		}
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	var log *slog.Logger
	if o.debug {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	so := sandbox.Options{Log: log, Stdin: stdin, Stdout: stdout, Stderr: stderr, ForwardSignals: true, DryRun: o.dryRun}
	// The policy cache must not be writable from a sandbox: a command
	// could otherwise rewrite the policy a later run uses.
	if d, err := cacheDir(); err == nil {
		so.Protect = append(so.Protect, filepath.Dir(d))
	}
	var p *policy.Policy
	if plan {
		if p, err = readPlan(o.plan, &so); err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", err)
			return 1
		}
	} else {
		name, data, err := loadSettings(o.settings, log)
		if err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", err)
			fmt.Fprintf(stderr, "srt refuses to fall back to the built-in defaults, which would drop the rules %s asks for.\n", name)
			return 1
		}
		p, err = compilePolicy(name, data, stderr)
		if errors.Is(err, errInvalid) {
			fmt.Fprintf(stderr, "Error: %s does not hold a valid config (above).\n", name)
			fmt.Fprintf(stderr, "srt refuses to fall back to the built-in defaults, which would drop the rules of %s.\n", name)
			return 1
		}
		if err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", err)
			return 1
		}
	}
	argv := o.argv
	if o.shellCmd != "" {
		argv = []string{"/bin/sh", "-c", o.shellCmd}
	}
	if len(argv) == 0 {
		fmt.Fprintln(stderr, "Error: No command specified. Use -c <command> or provide command arguments.")
		return 1
	}
	if p.Process.BwrapPath != "" {
		so.Bwrap = p.Process.BwrapPath
		if _, err := os.Stat(so.Bwrap); err != nil {
			fmt.Fprintf(stderr, "Error: bubblewrap (bwrap) not executable at %s\n", so.Bwrap)
			return 1
		}
	}
	return execute(p, argv, o, so, stdout, stderr)
}

// readPlan reads an artifact directory written by srtc compile (its
// checksums checked); on macOS its reviewed profile runs as it is.
func readPlan(dir string, so *sandbox.Options) (*policy.Policy, error) {
	if dir == "" {
		return nil, errors.New("srt run needs --plan DIR (a directory written by srtc compile)")
	}
	p, files, err := emit.ReadPlanFiles(dir)
	if err != nil {
		return nil, err
	}
	// The profile as checked, and only if the plan lists it; otherwise
	// the macOS runtime emits one from the plan's policy.
	if b, ok := files["macos/profile.sb"]; ok {
		so.SeatbeltProfile = b
	}
	return p, nil
}

// execute runs argv under p with the options that concern the run: the
// control descriptor, the audit log, the violations block, a dry run.
func execute(p *policy.Policy, argv []string, o *options, so sandbox.Options, stdout, stderr io.Writer) int {
	log := so.Log
	var control *os.File
	var err error
	if o.controlFD != 0 {
		if control, err = openControl(o.controlFD); err != nil {
			fmt.Fprintf(stderr, "Error: --control-fd %d is not usable: %v. Refusing to run the command without the control channel it asks for.\n", o.controlFD, err)
			return 1
		}
	}
	mo := sandbox.ManagerOptions{Log: log}
	if o.auditLog != "" {
		f, err := os.OpenFile(o.auditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "Error: --audit-log: %v\n", err)
			return 1
		}
		defer f.Close()
		mo.Audit = f
	}
	m, err := sandbox.NewManager(p, mo)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	controlFailed := make(chan struct{})
	if control != nil {
		// Lines are read once the sandbox is up; earlier ones wait in
		// the descriptor (settings.md §7.4), so none is lost.
		c := &controller{m: m, start: p, fd: o.controlFD, stderr: stderr, log: log}
		so.Started = func() {
			go func() {
				if c.read(control) != nil {
					close(controlFailed)
					cancel()
				}
			}()
		}
	}
	res, err := m.Run(ctx, argv, so)
	if res != nil && log != nil {
		log.Debug("bwrap", "argv", strings.Join(res.Argv, " "))
		for _, v := range res.Violations {
			log.Debug(v.Line)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	if so.DryRun {
		for _, a := range res.Argv {
			fmt.Fprintln(stdout, a)
		}
		return 0
	}
	if o.violations {
		if block := violations.Block(res.Violations); block != "" {
			fmt.Fprintln(stderr, block)
		}
	}
	code := res.ExitCode
	if aerr := m.AuditErr(); aerr != nil {
		fmt.Fprintf(stderr, "Error: the audit log %s is incomplete: %v\n", o.auditLog, aerr)
		if code == 0 {
			code = 1
		}
	}
	select {
	case <-controlFailed:
		return 1
	default:
	}
	return code
}

// loadSettings reads the settings file (settings.md §7): an explicit path
// as given, else ~/.srt-settings.json, whose absence alone means the
// built-in defaults.
func loadSettings(path string, log *slog.Logger) (string, []byte, error) {
	explicit := path != ""
	if !explicit {
		home, err := os.UserHomeDir()
		if err != nil {
			return "~/.srt-settings.json", nil, fmt.Errorf("cannot find the home directory: %v", err)
		}
		path = filepath.Join(home, ".srt-settings.json")
	}
	data, err := os.ReadFile(path)
	switch {
	case err == nil:
		if len(data) > builtin.MaxFileSize {
			return path, nil, fmt.Errorf("%s is larger than %d bytes", path, builtin.MaxFileSize)
		}
		return path, data, nil
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		if log != nil {
			log.Debug("no settings file; using the built-in defaults", "path", path)
		}
		return builtin.SettingsName, []byte(builtin.SettingsJSON), nil
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, fmt.Errorf("%s does not exist.", path)
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return path, nil, fmt.Errorf("%s could not be read (%v)", path, err)
	}
}

// doctor prints what the host allows; exit 1 if something is missing.
func doctor(stdout io.Writer) int {
	code := 0
	for _, c := range sandbox.Doctor("") {
		if c.OK {
			fmt.Fprintf(stdout, "ok    %s: %s\n", c.Name, c.Detail)
			if c.Note != "" {
				fmt.Fprintf(stdout, "      note: %s\n", c.Note)
			}
			continue
		}
		code = 1
		fmt.Fprintf(stdout, "FAIL  %s: %s\n      fix: %s\n", c.Name, c.Detail, c.Remedy)
	}
	return code
}
