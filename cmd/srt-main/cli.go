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
	goruntime "runtime"
	"slices"
	"srt.dev/cmd/internal/cmdline"
	"strconv"
	"strings"
	"sync"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/artifact"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/internal/pollread"
	"srt.dev/internal/untrusted"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/nofollow"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/sandbox"
	"srt.dev/runtime/trust"
	"srt.dev/runtime/violations"
	"srt.dev/schema/builtin"
)

// run is srt: it returns the exit status, and prints every error of srt's
// own in one place and one style (report).
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runIn(nil, args, stdin, stdout, stderr)
}

// runIn is run for a session of the warm server (nil: none).
func runIn(s *session, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	code, err := runCmd(s, args, stdin, stdout, stderr)
	prefix := errorPrefix
	if len(args) > 0 && args[0] == "proxy" {
		prefix = proxyPrefix
	}
	return report(stderr, prefix, code, err)
}

// runCmd parses the command line and runs what it asks for: a
// subcommand, or a command in the sandbox (its exit status).
func runCmd(s *session, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	c, args := cmdline.Of(args)
	switch c.Name {
	case "proxy":
		return proxyCmd(args, stdout, stderr)
	case "", "run":
		return sandboxCmd(s, c, args, stdin, stdout, stderr)
	}
	if cmdline.HelpAsked(args) {
		return cmdline.PrintHelp(stdout, c)
	}
	switch c.Name {
	case "doctor":
		if len(args) > 0 {
			return 0, fail("srt doctor takes no arguments (got %q)", args[0]).also(c.Usage())
		}
		return doctor(stdout), nil
	case "quarantine":
		return quarantineCmd(args, stdout, stderr)
	default: // trust
		return trustCmd(args, stdout)
	}
}

// sandboxCmd is srt or srt run (c): it runs a command in the sandbox,
// in a sandbox the warm server prepared when it can (warm.go).
func sandboxCmd(s *session, c *cmdline.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	o, err := cmdline.Parse(args, c)
	if err != nil {
		return 0, err
	}
	switch o.Ask {
	case cmdline.AskHelp:
		return cmdline.PrintHelp(stdout, c)
	case cmdline.AskVersion:
		fmt.Fprintln(stdout, versionLine())
		return 0, nil
	}
	if o.Refusals, err = refusalsWhen(o.Refusals, os.Getenv); err != nil {
		return 0, err
	}
	// The steps are timed from this process's start, or in the warm
	// server from the command's arrival.
	var steps *stepTimes
	if f := os.Getenv("SRT_STEP_TIMES"); f != "" {
		start := processStart
		if s != nil {
			start = s.start
		}
		steps = newStepTimes(f, start)
		defer steps.write()
	}
	p, so, err := runOptions(c, o, steps, stdin, stdout, stderr)
	if err != nil {
		return 0, err
	}
	if s != nil {
		so.ForwardSignals, so.Signals, so.Prepared = false, s.signals, s.take()
	}
	argv := o.Argv
	if o.ShellCmd != "" {
		argv = []string{"/bin/sh", "-c", o.ShellCmd}
	}
	if len(argv) == 0 {
		return 0, fail("No command specified. Use -c <command> or provide command arguments.")
	}
	if err := setBwrap(p, &so); err != nil {
		return 0, err
	}
	warnWritesHome(p, stderr)
	return execute(p, argv, o, so, stdout, stderr)
}

// runOptions are the policy of srt or srt run (c) with options o, and
// the sandbox's options (its steps timed by steps, when not nil), as a
// run of its command needs them and as the warm server prepares a
// sandbox with them.
func runOptions(c *cmdline.Command, o *cmdline.Options, steps *stepTimes, stdin io.Reader, stdout, stderr io.Writer) (*policy.Policy, sandbox.Options, error) {
	var log *slog.Logger
	if o.Debug {
		log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	so := sandbox.Options{Log: log, Stdin: stdin, Stdout: stdout, Stderr: stderr, ForwardSignals: true, DryRun: o.DryRun}
	so.State = srtState(o)
	var err error
	if so.CheckLimits, err = checkLimits(os.Getenv); err != nil {
		return nil, so, err
	}
	switch v := os.Getenv("SRT_WRITE_WATCH"); v {
	case "", "on":
	case "off":
		so.NoWriteWatch = true
	default:
		return nil, so, fmt.Errorf("SRT_WRITE_WATCH must be on or off, not %q", v)
	}
	if steps != nil {
		so.Step = steps.step
	}
	p, err := loadPolicy(o, c.Name == "run", &so, stderr)
	if err != nil {
		return nil, so, err
	}
	if so.Step != nil {
		so.Step("policy ready")
	}
	return p, so, nil
}

// setBwrap sets the bubblewrap the policy names (process.bwrapPath).
func setBwrap(p *policy.Policy, so *sandbox.Options) error {
	if p.Process.BwrapPath != "" {
		so.Bwrap = p.Process.BwrapPath
		if _, err := os.Stat(so.Bwrap); err != nil {
			return fail("bubblewrap (bwrap) not executable at %s", so.Bwrap)
		}
	}
	return nil
}

// loadPolicy reads the policy of the run: a compiled plan (run --plan),
// or a settings file compiled by srtc (whose diagnostics it prints).
func loadPolicy(o *cmdline.Options, plan bool, so *sandbox.Options, stderr io.Writer) (*policy.Policy, error) {
	if plan {
		return readPlan(o.Plan, so)
	}
	name, data, err := loadSettings(o.Settings, so.Log)
	if o.Settings == "" {
		if cwd, err := os.Getwd(); err == nil {
			if project := findProjectSettings(cwd); project != "" {
				noteProjectSettings(stderr, project, name, cwd, o.Args)
			}
		}
	}
	if err != nil {
		return nil, fail("%v", err).also(fmt.Sprintf("srt refuses to fall back to the built-in defaults, which would drop the rules %s asks for.", name))
	}
	p, err := compilePolicy(name, data, stderr)
	if errors.Is(err, errInvalid) {
		return nil, fail("%s does not hold a valid config (above).", name).also(fmt.Sprintf("srt refuses to fall back to the built-in defaults, which would drop the rules of %s.", name))
	}
	return p, err
}

// srtState are srt's own files on this host that no sandbox may change
// (policy.SrtState): the settings file or plan directory of this run,
// the user's default settings file and every project settings file a
// later run here could name (projectSettingsPaths), srt, srt-init and
// srtc, the policy cache, the audit log. The runtime adds its registry
// and the quarantine.
func srtState(o *cmdline.Options) map[policy.StateKind][]string {
	st := map[policy.StateKind][]string{}
	add := func(k policy.StateKind, p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil && !slices.Contains(st[k], abs) {
			st[k] = append(st[k], abs)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(policy.StatePolicy, filepath.Join(home, ".srt-settings.json"))
	}
	add(policy.StatePolicy, o.Settings)
	if cwd, err := os.Getwd(); err == nil {
		for _, p := range projectSettingsPaths(cwd) {
			add(policy.StatePolicy, p)
		}
	}
	add(policy.StatePolicy, o.Plan)
	if self, err := os.Executable(); err == nil {
		// srt's programs beside it, there or not: the front that starts
		// this one, this one, the init step a later run starts, and the
		// srtc findSrtc takes before the one on PATH. One replaced or
		// planted by a sandbox would run unconfined in a later run.
		dir, ext := filepath.Dir(self), filepath.Ext(self)
		add(policy.StatePrograms, self)
		for _, name := range []string{"srt", "srt-main", initstep.Binary, "srtc"} {
			add(policy.StatePrograms, filepath.Join(dir, name+ext))
		}
	}
	if srtc, err := findSrtc(); err == nil {
		add(policy.StatePrograms, srtc)
	}
	for _, p := range srtcOnPath() {
		add(policy.StatePrograms, p)
	}
	if d, err := cacheDir(); err == nil {
		add(policy.StateCache, filepath.Dir(d))
	}
	add(policy.StateAuditLog, o.AuditLog)
	return st
}

// warnWritesHome warns when an allowWrite of "." grants the home
// directory because srt runs there.
func warnWritesHome(p *policy.Policy, stderr io.Writer) {
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	if r, ok := policy.WritesCwdAtHome(p, cwd, home); ok {
		fmt.Fprintf(stderr, "srt: warning: allowWrite \".\" (%s, %s) is the working directory, which is the home directory %s: the command can change shell start-up files, ~/.ssh and every tool's configuration. Run srt in the project's directory, or name the directories to write.\n", r.Origin.Key, p.Source, home)
	}
}

// readPlan reads an artifact directory written by srtc compile (its
// checksums checked); on macOS its reviewed profile runs as it is.
func readPlan(dir string, so *sandbox.Options) (*policy.Policy, error) {
	if dir == "" {
		return nil, errors.New("srt run needs --plan DIR (a directory written by srtc compile)")
	}
	path, err := planDir(dir, so.DryRun, so.Stderr)
	if err != nil {
		return nil, err
	}
	m, files, err := artifact.Read(os.DirFS(path), dir)
	if err != nil {
		return nil, err
	}
	if err := planTrusted(dir, path, m.Digest, so.DryRun, so.Stderr); err != nil {
		return nil, err
	}
	// The profile as checked, and only if the plan lists it; otherwise
	// the macOS runtime emits one from the plan's policy.
	if b, ok := files["macos/profile.sb"]; ok {
		so.SeatbeltProfile = b
	}
	if goruntime.GOOS == "linux" {
		if so.LinuxPlan, err = linuxPlan(dir, m, files); err != nil {
			return nil, err
		}
	}
	return &m.Policy, nil
}

// linuxPlan is the directory's Linux plan as checked: linux/bwrap.args and
// the seccomp programs, run as they are.
func linuxPlan(dir string, m *artifact.Manifest, files artifact.Files) (*sandbox.LinuxPlan, error) {
	name := filepath.Join(dir, "linux", "bwrap.args")
	args, ok := files["linux/bwrap.args"]
	if !ok {
		return nil, fmt.Errorf("%s holds no Linux plan (%s): compile it with srtc compile --target linux (or all)", dir, name)
	}
	lp := &sandbox.LinuxPlan{Name: name, Args: args, Seccomp: map[seccomp.Arch][]byte{}}
	for n, b := range files {
		if arch, ok := strings.CutPrefix(n, "linux/seccomp."); ok && strings.HasSuffix(arch, ".bpf") {
			lp.Seccomp[seccomp.Arch(strings.TrimSuffix(arch, ".bpf"))] = b
		}
	}
	if m.Concrete != nil {
		lp.Home, lp.Cwd = m.Concrete.Home, m.Concrete.Cwd
	}
	return lp, nil
}

// execute runs argv under p with the options that concern the run: the
// control descriptor, the audit log (which the Manager writes), the
// violations block, a dry run.
func execute(p *policy.Policy, argv []string, o *cmdline.Options, so sandbox.Options, stdout, stderr io.Writer) (int, error) {
	log := so.Log
	var control *pollread.Reader
	var err error
	if o.ControlFD != 0 {
		if control, err = openControl(o.ControlFD); err != nil {
			return 0, fail("--control-fd %d: %v. The option reads settings, one JSON document a line, from a descriptor srt inherits open for reading (in a shell: srt --control-fd %d -c CMD %d< FILE). Refusing to run the command without the control channel it asks for.", o.ControlFD, err, o.ControlFD, o.ControlFD)
		}
		defer control.Close()
	}
	mo := sandbox.ManagerOptions{Log: log}
	if o.AuditLog != "" {
		f, err := os.OpenFile(o.AuditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return 0, fail("--audit-log: %v", err)
		}
		defer f.Close()
		mo.Audit = f
	}
	m, err := sandbox.NewManager(p, mo)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	controlFailed := make(chan struct{})
	var controlRead sync.WaitGroup
	if control != nil {
		// Lines are read once the sandbox is up; earlier ones wait in
		// the descriptor (docs/reference.md#live-updates), so none is lost.
		// Reading stops when the run ends, whatever the writer does.
		c := &controller{m: m, start: p, fd: o.ControlFD, stderr: stderr, log: log}
		so.Started = func() {
			controlRead.Add(1)
			go func() {
				defer controlRead.Done()
				if c.read(control) != nil {
					close(controlFailed)
					cancel()
				}
			}()
		}
	}
	res, err := m.Run(ctx, argv, so)
	if control != nil {
		control.Stop()
		controlRead.Wait()
	}
	if res != nil && log != nil {
		log.Debug("bwrap", "argv", strings.Join(res.Redacted(), " "))
		for _, v := range res.Violations {
			log.Debug(v.Line)
		}
	}
	if err != nil {
		return 0, err
	}
	if so.DryRun {
		dryRun(stdout, res, len(argv))
		return 0, nil
	}
	if showRefusals(o.Refusals, stderr) {
		printRefusals(stderr, res.Violations)
		if res.ExitCode != 0 {
			printUnusedLoopback(stderr, res.UnusedLoopback)
		}
	}
	if o.Violations {
		if block := violations.Block(res.Violations); block != "" {
			fmt.Fprintln(stderr, block)
		}
	}
	code := res.Status() // with Unchecked, srt said why
	if err := m.AuditErr(); err != nil {
		return 0, fail("the audit log %s is incomplete: %v", o.AuditLog, err).withStatus(max(code, exitFailure))
	}
	select {
	case <-controlFailed:
		return 0, &failure{} // the controller said why
	default:
	}
	return code, nil
}

// loadSettings reads the settings file (docs/reference.md#settings-loading): an explicit path
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
			return path, nil, fmt.Errorf("%s: %s", path, builtin.TooLarge(int64(len(data))))
		}
		return path, data, nil
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		if log != nil {
			log.Debug("no settings file; using the built-in defaults", "path", path)
		}
		return builtin.SettingsName, []byte(builtin.SettingsJSON), nil
	case errors.Is(err, fs.ErrNotExist):
		//lint:ignore ST1005 the reference CLI's words, which its clients match
		return path, nil, fmt.Errorf("%s does not exist.", path)
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return path, nil, fmt.Errorf("%s could not be read (%v)", path, err)
	}
}

// doctor prints what the host allows, and whether srt finds srtc; exit 1
// if something is missing.
func doctor(stdout io.Writer) int {
	code := 0
	checks := sandbox.Doctor("")
	at := len(checks)
	for i, c := range checks {
		if c.Name == "bubblewrap" {
			at = i + 1
		}
	}
	checks = slices.Insert(checks, at, srtcCheck())
	for _, c := range checks {
		if c.OK {
			if c.Detail == "" {
				fmt.Fprintf(stdout, "ok    %s\n", c.Name)
			} else {
				fmt.Fprintf(stdout, "ok    %s: %s\n", c.Name, c.Detail)
			}
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

// dryRun prints the bubblewrap command line one word a line, each with the
// line of linux/bwrap.args it came from, or what else added it; the
// proxies' password is redacted (Result.Redacted).
func dryRun(w io.Writer, res *sandbox.Result, command int) {
	name := "bwrap.args"
	for i, a := range res.Redacted() {
		from := "srt"
		switch {
		case i >= len(res.Argv)-command:
			from = "the command"
		case i < len(res.ArgvLines) && res.ArgvLines[i] > 0:
			from = name + ":" + strconv.Itoa(res.ArgvLines[i])
		case len(res.ArgvLines) == 0:
			fmt.Fprintln(w, a) // no lines known (not Linux)
			continue
		}
		fmt.Fprintf(w, "%-40s # %s\n", quoteWord(a), from)
	}
}

// quoteWord quotes a word that a line could not show plainly.
func quoteWord(a string) string {
	if a == "" || strings.ContainsAny(a, " \t\n\r\"#\\") || strings.ContainsFunc(a, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return strconv.Quote(a)
	}
	return a
}

// checkLimits reads SRT_CHECK_ENTRIES and SRT_CHECK_SECONDS, which bound
// the walks of the write roots before and after the command (nil: the
// defaults). Either way the check fails closed at its limit: a lower one
// only makes srt refuse sooner, a higher one lets it walk longer.
func checkLimits(getenv func(string) string) (*quarantine.Limits, error) {
	e, s := getenv("SRT_CHECK_ENTRIES"), getenv("SRT_CHECK_SECONDS")
	if e == "" && s == "" {
		return nil, nil
	}
	lim := quarantine.DefaultLimits
	if e != "" {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil || n < 1 {
			return nil, fail("SRT_CHECK_ENTRIES must be a whole number of directory entries above 0, not %q", e)
		}
		lim.Entries = n
	}
	if s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 1 {
			return nil, fail("SRT_CHECK_SECONDS must be a whole number of seconds above 0, not %q", s)
		}
		lim.Time = time.Duration(n) * time.Second
	}
	return &lim, nil
}

// planDir is the plan directory dir as the record of trusted plans
// names it (trust.PlanDir): its absolute, clean path. One reached through
// a symbolic link is refused, saying where it leads: srt trusts a plan in
// its own directory and follows no link to one (a sandboxed run that could
// write the project could plant a link to another trusted plan). A dry run
// only warns, and reads the plan where the link leads.
func planDir(dir string, dryRun bool, stderr io.Writer) (string, error) {
	path, err := trust.PlanDir(dir)
	var le *nofollow.LinkError
	if !errors.As(err, &le) {
		return path, err
	}
	msg := fmt.Sprintf("the plan directory %s is reached through a symbolic link (%v): srt trusts a plan in the directory that holds it, named without links, and follows no link to a plan, which a sandboxed run that could write there may have planted", dir, le)
	if dryRun {
		fmt.Fprintf(stderr, "srt: warning: %s; srt run would refuse it\n", msg)
		return filepath.Abs(dir)
	}
	real, rerr := filepath.EvalSymlinks(dir)
	if rerr != nil {
		return "", fail("%s.", msg).also("Name the plan directory by its own path, without links.")
	}
	q := untrusted.Quote(real)
	return "", fail("%s.", msg).also(fmt.Sprintf("Name it by its own path, after checking that %s is the plan you mean to run: srt run --plan %s (if it is not trusted there, review it, then: srt trust %s)", q, q, q))
}

// planTrusted refuses a plan that is not the one this machine trusts in
// its directory, path (runtime/trust): a sandboxed run that could write
// the directory could have rewritten it, checksums included, or put back
// an older version or another directory's plan. A dry run only warns: it
// runs nothing.
func planTrusted(dir, path, digest string, dryRun bool, stderr io.Writer) error {
	r, err := trust.Lookup(path)
	if r != nil && r.Digest == digest {
		return nil
	}
	var why string
	switch {
	case err != nil:
		why = fmt.Sprintf("the record of trusted plans cannot be read (%v)", err)
	case r != nil:
		why = fmt.Sprintf("the plan trusted there is another (plan.json sha256 %s, trusted by %s on %s): this one changed since, or was put back from an older version or copied from another directory", r.Digest, r.By, r.Time.Format("2006-01-02 15:04 UTC"))
	case trust.TrustedBefore(path, digest):
		why = "no plan is trusted there: this one is in a record of the other form, a plan's digest for no directory, which trusts nothing (a plan is trusted in one directory)"
	default:
		why = "no plan is trusted there: srtc compile trusts the directory it writes (outside a sandbox), and a plan moved or copied there must be trusted there"
	}
	msg := fmt.Sprintf("the plan in %s is not trusted on this machine: its plan.json (sha256 %s) is not the plan trusted in %s; %s. A sandboxed run that could write %s can rewrite a plan, checksums included, or put back any other", dir, digest, path, why, dir)
	if dryRun {
		fmt.Fprintf(stderr, "srt: warning: %s; srt run would refuse it\n", msg)
		return nil
	}
	return fail("%s.", msg).also(fmt.Sprintf("Review it (git diff %s, srtc explain %s), then trust it: srt trust %s", dir, dir, dir))
}

// trustCmd is srt trust DIR...
func trustCmd(args []string, stdout io.Writer) (int, error) {
	if len(args) == 0 {
		return 0, fail("srt trust needs the plan directories to trust").also(cmdline.Named("trust").Usage())
	}
	var errs []error
	for _, dir := range args {
		path, err := trust.PlanDir(dir)
		var m *artifact.Manifest
		if err == nil {
			m, _, err = artifact.Read(os.DirFS(path), dir)
		}
		if err == nil {
			err = trust.Trust(path, m.Digest, "srt trust")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", dir, err))
			continue
		}
		fmt.Fprintf(stdout, "srt: trusted the plan in %s (plan.json sha256 %s): srt run --plan runs it from %s on this machine, and no plan trusted there before\n", dir, m.Digest, path)
	}
	return 0, errors.Join(errs...)
}
