//go:build linux

package sandbox

// The Linux steps of a run up to bubblewrap's command line (see run.go):
// the credentials, the plan resolved for this host, the scratch space and
// the record of the run. start_linux.go starts it.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/runtime/credentials"
	"srt.dev/runtime/gitconfig"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/private"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/trust"
)

// osRun is what the Linux steps of a run need (see run): the plan
// prepared up to bubblewrap's command line, then the running sandbox.
type osRun struct {
	tty  *hostTerminal // nil without a terminal
	self string        // this binary
	// init is the init step's program: srt-init, or self (initProgram).
	init   func() string
	tls    *credentials.TLS     // nil without tlsTerminate
	masks  *credentials.Masking // the masked credentials
	prog   []byte               // the seccomp program
	reg    *placeholders.Registry
	res    *resolve.Result
	store  *quarantine.Store // nil when nothing is quarantined
	record *placeholders.Run // the run's record, from prepare on
	// snap is what the write roots held before the command started.
	snap *quarantine.Snapshot
	// limits is how the plan's resource limits are enforced here.
	limits *limitsPlan
	// ll reads the second layer's refusals, once llOpened has it; nil
	// when this run cannot report them.
	ll       *landlockAudit
	llOpened chan *landlockAudit
	// watchWrites says whether the init step watches the command's
	// writes; ww serves the watch once the init step hands it over.
	watchWrites bool
	ww          *writeWatch
	// steps are the plan's steps, resolved here: refusals name the
	// step behind the mount that refused.
	steps []bwrap.Step
	// trustDir records the plans the user trusts ("" when there is no
	// home for it).
	trustDir string
	// Scratch space of the run ("" when not made): the source of
	// placeholder directories, TMPDIR, the trust bundle's directory,
	// the masked credential files' directory.
	empty, tmp, tlsDir, maskDir string
	// What start leaves for the steps after the command (start_linux.go):
	// the write roots to check (nil for none), why the sandbox did not
	// start the command (herr), whether the CPU limit stopped it, and
	// what watches the running command.
	check *quarantine.Spec
	herr  error
	// stopProxies stops the proxies that serve the sandbox, once.
	stopProxies func()
	// What start leaves for the command's start (launch): the sandbox's
	// cgroups, the host's end of the hand-off socket and what came
	// through it, and ready, which the command's start waits for.
	cg      *cgroupSet
	hostEnd *os.File
	handoff handoff
	ready   func(r *run) error // r: the run whose command starts
	// later says the sandbox starts before its command is known
	// (Manager.Prepare); command is then its start message's command
	// (initstep.EncodeCommand), and exited says when bubblewrap has.
	later bool
	// said is what the preparation of a sandbox for a later command
	// says to that command (adopt).
	said bytes.Buffer
	// resolved is how many of res.Args the resolution gave (commandLine
	// adds to them).
	resolved   int
	command    []byte
	stdio      []*os.File
	exited     chan error
	cpuHit     func() bool
	stopWatch  func()
	stopResize func()
}

// discard removes the scratch space of a run that does not start, and
// its record.
func (r *run) discard() {
	if r.record != nil {
		r.record.Release()
	}
	if r.empty != "" {
		os.RemoveAll(r.empty)
	}
	removeTmp(r.tmp)
	for _, d := range []string{r.tlsDir, r.maskDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
}

// prepare makes everything a run needs before bubblewrap starts: the TLS
// material and masked credentials, the plan's steps resolved on this
// host, the scratch space, and the command line. Every error of the
// settings or the host is reported here, and nothing is left behind.
func (r *run) prepare() error {
	p, o := r.p, r.o
	// From here on, SIGINT, SIGTERM, SIGHUP and SIGQUIT are for the
	// command: they are forwarded to it once it runs, never left to kill
	// srt (which would leave a terminal in raw mode).
	r.catchSignals(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	// A command run from a terminal gets one of its own (terminal_linux.go);
	// one that comes later runs without (Prepare).
	if !r.later {
		r.tty = newHostTerminal(o.Stdin, o.Stdout, o.Stderr)
	}
	if err := r.prepareCredentials(); err != nil {
		return err
	}
	if err := checkCwd(p, o.Home, o.Cwd); err != nil {
		return err
	}
	if !o.DryRun {
		// What srt made for the command is said to the command that
		// comes later, when there is one (adopt).
		var said io.Writer = o.Stderr
		if r.later {
			said = &r.said
		}
		createWriteDirs(p, o.Home, o.Cwd, said)
	}
	steps, err := r.readPlan()
	if err != nil {
		return err
	}
	if r.self, err = os.Executable(); err != nil {
		return err
	}
	r.trustDir, _ = trust.Dir()
	// Which program is the init step is read from its build information
	// while the rest is prepared; bubblewrap's start waits for it.
	initProg := make(chan string, 1)
	go func() {
		prog, why := initProgram(r.self)
		if why != "" {
			o.debug("init step: srt itself: " + why)
		}
		o.debug("init step: " + prog)
		initProg <- prog
	}()
	r.init = sync.OnceValue(func() string { return <-initProg })
	r.atEnd(func() { r.init() }) // a run that does not start waits for it too
	if err := r.begin(); err != nil {
		return err
	}
	if err := r.prepareHost(&steps); err != nil {
		r.discard()
		return err
	}
	env := proxyEnv(r.token, r.key, r.self, r.noProxy(), HTTPPort, SOCKSPort)
	if err := r.trustBundle(&env, &steps); err != nil {
		r.discard()
		return err
	}
	if r.res, err = resolve.Resolve(steps, r.host(env)); err != nil {
		r.discard()
		return err
	}
	// The write roots' descriptors go to bubblewrap, and are closed once
	// it has them (start), or with a run that does not start.
	r.atEnd(r.res.Close)
	if !o.DryRun {
		if err := refuseUnchecked(r.reg, r.res.WriteRoots, o.Cwd); err != nil {
			r.discard()
			return err
		}
	}
	for _, w := range r.res.Warnings {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", w)
	}
	r.limits = planLimits(r.res.Limits)
	for _, n := range r.limits.notes {
		o.debug("limits: " + n)
	}
	for _, w := range r.limits.warnings {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", w)
	}
	r.out = r.commandLine(steps, r.argv)
	o.step("prepared")
	return nil
}

// readPlan reads the plan's steps and this machine's seccomp program:
// Options.LinuxPlan's, or those compiled from the policy.
func (r *run) readPlan() ([]bwrap.Step, error) {
	var err error
	lp := r.o.LinuxPlan
	if lp == nil {
		if lp, err = compiledPlan(r.p); err != nil {
			return nil, err
		}
	}
	steps, prog, err := lp.read(r.o.Home, r.o.Cwd)
	if err != nil {
		return nil, err
	}
	r.prog = prog
	return steps, nil
}

// begin records the run in the registry, with the source of its
// placeholder directories. Placeholders and scratch space are recorded
// before bubblewrap makes them, so that they are removed however this
// run ends.
func (r *run) begin() error {
	var err error
	if r.reg, err = placeholders.Default(); err != nil {
		return err
	}
	if pending, _ := r.reg.Sweep(false); pending && !r.o.DryRun {
		// A killed run still owes the check of its write roots: a reaper
		// does it, off this run's way.
		startChecker(r.self, r.reg, r.o.debug)
	}
	// Registered before it looks at the tree: a placeholder this run
	// finds is not removed under it by another run's clean-up.
	if r.record, err = r.reg.Begin(); err != nil {
		return err
	}
	if r.empty, err = r.record.Scratch(); err != nil {
		r.discard()
		return err
	}
	// The placeholders' sources (resolve.Host.EmptyDir, EmptyFile).
	if err = os.Mkdir(filepath.Join(r.empty, "dir"), 0o700); err == nil {
		err = os.WriteFile(filepath.Join(r.empty, "file"), nil, 0o400)
	}
	if err != nil {
		r.discard()
		return err
	}
	return nil
}

// prepareCredentials prepares TLS termination and the masked
// credentials (runtime/credentials): every error (an unreadable CA file,
// a masked variable that is not set) comes before anything runs.
func (r *run) prepareCredentials() error {
	p, o := r.p, r.o
	var err error
	if p.Network.TLS != nil {
		if r.tls, err = credentials.NewTLS(p.Network.TLS, o.Home, o.Cwd, r.m.tls.Load, o.debug); err != nil {
			return err
		}
	}
	r.masks, err = credentials.MaskEnv(o.Env, p.Env, p.Network.Allowed, func(msg string) {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", msg)
	})
	if err != nil {
		return err
	}
	r.env = r.masks.Env()
	for _, name := range r.masks.AWSKeyNames() {
		o.debug(fmt.Sprintf("credentials: %s is an AWS key: SigV4 requests signed with its stand-in are re-signed for the hosts all its variables are injected into; credentials.sigv4 follows policy updates, the pairs and masked variables are fixed for the run", name))
	}
	return nil
}

// prepareHost finds this binary, opens the quarantine, protects srt's own
// state and makes the command's TMPDIR.
func (r *run) prepareHost(steps *[]bwrap.Step) error {
	// The protected names the command writes below its write roots are
	// moved to the quarantine when it ends (the sandbox pins only those
	// that exist when it starts); so is one of srt's own files it creates.
	dir, err := quarantine.DefaultDir()
	if err == nil {
		r.store, err = quarantine.Open(dir)
	}
	if err != nil {
		return fmt.Errorf("the quarantine for protected names written in the sandbox is not usable: %w (set XDG_STATE_HOME to a directory of your own)", err)
	}
	// srt's other state there exists before the sandbox starts, so that
	// it is bound read-only: a directory made meanwhile (another run's
	// unchecked tree, a plan trusted) would be the command's to change.
	for _, d := range []string{r.reg.UncheckedDir, r.trustDir} {
		if d == "" {
			continue
		}
		if err := private.Dir(d); err != nil {
			return fmt.Errorf("srt's state is not usable: %w (set XDG_STATE_HOME to a directory of your own)", err)
		}
	}
	// The command's TMPDIR: a directory of this run, bound where the plan
	// says, removed with the other scratch directories.
	for _, s := range *steps {
		if s.Directive == bwrap.PrivateTmp {
			if err := tmpMountPoint(s.Operand); err != nil {
				return err
			}
			var err error
			if r.tmp, err = r.record.Tmp(); err != nil {
				return err
			}
		}
	}
	return nil
}

// state are srt's own files on this host (see Options.State): the
// caller's, bubblewrap, the registry and the tree cache, the quarantine.
func (r *run) state() map[policy.StateKind][]string {
	out := map[policy.StateKind][]string{}
	for k, v := range r.o.State {
		out[k] = append(out[k], v...)
	}
	// bubblewrap runs on the host, as srt's user, at every run: the one
	// in use, and the one a later run takes from PATH (or one a sandbox
	// planted before it there), whatever this run's bwrapPath, would too.
	out[policy.StatePrograms] = append(out[policy.StatePrograms], r.o.Bwrap)
	out[policy.StatePrograms] = append(out[policy.StatePrograms], PathCandidates("bwrap")...)
	out[policy.StateRegistry] = append(out[policy.StateRegistry], r.reg.Dir, r.reg.TreeCache())
	if r.reg.UncheckedDir != "" {
		out[policy.StateRegistry] = append(out[policy.StateRegistry], r.reg.UncheckedDir)
	}
	if r.trustDir != "" {
		out[policy.StateTrust] = append(out[policy.StateTrust], r.trustDir)
	}
	out[policy.StateQuarantine] = append(out[policy.StateQuarantine], r.store.Dir)
	return out
}

// trustBundle writes the trust bundle into a scratch directory of the run
// (removed with it, by the reaper if srt is killed), bound read-only into
// the sandbox, points the clients' variables at it, and hides the CA key
// file, if any.
func (r *run) trustBundle(env *[]string, steps *[]bwrap.Step) error {
	if r.tls == nil {
		return nil
	}
	var err error
	if r.tlsDir, err = r.record.Scratch(); err != nil {
		return err
	}
	bundle := filepath.Join(r.tlsDir, credentials.BundleName)
	if err := os.WriteFile(bundle, r.tls.Bundle, 0o444); err != nil {
		return err
	}
	*env = append(*env, r.tls.Env(bundle)...)
	if r.tls.KeyPath != "" {
		*steps = append(*steps, bwrap.Step{Directive: bwrap.DenyRead, Operand: r.tls.KeyPath})
	}
	return nil
}

// host is what the resolve step needs to know of this host and run.
func (r *run) host(env []string) resolve.Host {
	o := r.o
	h := resolve.Host{
		Home: o.Home, Cwd: o.Cwd, EmptyDir: filepath.Join(r.empty, "dir"), EmptyFile: filepath.Join(r.empty, "file"), SeccompFD: initstep.FDSeccomp, BindFD: initstep.FDBind, TmpDir: r.tmp, State: r.state(),
		Root:      os.Geteuid() == 0, // bubblewrap runs as this process does
		ProxyEnv:  externalEnv(env, r.p.Network, HTTPPort, SOCKSPort),
		MaskValue: r.masks.Value,
	}
	// Masked credential files: a copy with the secrets replaced, in a
	// scratch directory of the run, bound read-only over the real file.
	h.MaskedCopy = r.masks.FileCopier(r.p.Filesystem, func() (string, error) {
		if r.maskDir == "" {
			d, err := r.record.Scratch()
			if err != nil {
				return "", err
			}
			r.maskDir = d
		}
		return r.maskDir, nil
	})
	if n, err := strconv.Atoi(envValue(o.Env, "GIT_CONFIG_COUNT")); err == nil {
		h.GitConfigCount = n
	}
	h.GitHost = gitHostFiles(o.Home, o.Env)
	if o.LinuxPlan != nil {
		h.Plan = o.LinuxPlan.Name
	}
	return h
}

// gitHostFiles are git's files outside the repository
// (gitconfig.ReadOutside) as srt's environment names them and as the
// command's does (env), each once: the user's next git command runs in
// one of them.
func gitHostFiles(home string, env []string) []string {
	out := gitconfig.ReadOutside(home, os.Getenv).Files
	for _, f := range gitconfig.ReadOutside(home, func(k string) string { return envValue(env, k) }).Files {
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// commandLine is bubblewrap's command line for the resolved plan, with
// what the runtime adds after it, and the line of linux/bwrap.args each
// word came from (0 for the runtime's own).
func (r *run) commandLine(steps []bwrap.Step, argv []string) *Result {
	o, res := r.o, r.res
	r.resolved = len(res.Args)
	if r.tlsDir != "" {
		res.Args = append(res.Args, "--ro-bind", r.tlsDir, r.tlsDir)
		res.Lines = append(res.Lines, 0, 0, 0)
	}
	for _, n := range res.Notes {
		o.debug("resolve: " + n)
	}
	// Other runs' temporary directories, last: nothing reopens them.
	if fi, err := os.Stat(r.reg.TmpDir); err == nil && fi.IsDir() {
		res.Args = append(res.Args, "--tmpfs", r.reg.TmpDir)
	}
	initArgs := []string{InitArg}
	if r.later {
		initArgs = append(initArgs, initstep.CommandArg)
	}
	if r.tty != nil {
		initArgs = append(initArgs, r.tty.initArg())
	}
	r.steps = steps
	if r.watchWrites = !o.NoWriteWatch && !r.p.Filesystem.Disabled && len(initstep.WatchedCalls) > 0; r.watchWrites {
		initArgs = append(initArgs, initstep.WatchArg)
	}
	ll, llLines, why := landlockInitArgs(res.Landlock, initstep.ABI())
	if why != "" {
		o.debug(why)
	}
	full := append([]string{o.Bwrap}, res.Args...)
	full = append(full, "--chdir", o.Cwd, "--as-pid-1", "--info-fd", strconv.Itoa(initstep.FDInfo),
		"--", "/proc/self/fd/"+strconv.Itoa(initstep.FDSelf))
	full = append(full, initArgs...)
	lines := append([]int{0}, res.Lines...)
	lines = append(lines, make([]int, len(full)-len(lines))...)
	// The init step's options of the second layer come from @landlock
	// and its @landlock-write lines.
	lines = append(lines, llLines...)
	full = append(full, ll...)
	// The rlimits come from the @limit lines.
	for _, a := range r.limits.initArgs {
		full = append(full, a.arg)
		lines = append(lines, a.line)
	}
	full = append(full, "--")
	full = append(full, argv...)
	lines = append(lines, make([]int, len(full)-len(lines))...)
	return &Result{Argv: full, ArgvLines: lines}
}

// reachesHostLoopback reports whether the command can connect to this
// host's loopback without the proxies: never on Linux, where the sandbox
// has a network namespace, and a loopback, of its own.
func (r *run) reachesHostLoopback() bool { return false }
