//go:build linux

package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/runtime/credentials"
	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/violations"
)

// Run runs argv (a program and its arguments) in a sandbox of the
// Manager's policy, as it is when the command starts. When ctx ends, the
// command gets SIGTERM, and SIGKILL 2 s later.
//
// A run is prepared (prepare: everything --dry-run shows, and every error
// of the settings or the host before anything starts), started (start:
// bubblewrap, the proxies on the listeners the sandbox hands over) and
// supervised (supervise, shared with macOS: signals, the context, the
// SIGTERM→SIGKILL wait).
func (m *Manager) Run(ctx context.Context, argv []string, o Options) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	// From here on, SIGINT, SIGTERM, SIGHUP and SIGQUIT are for the
	// command: they are forwarded to it once it runs, never left to kill
	// srt (which would leave a terminal in raw mode).
	sigs := make(chan os.Signal, 8)
	if o.ForwardSignals {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		defer signal.Stop(sigs)
	}
	r, err := m.prepare(m.Policy(), argv, o)
	if err != nil {
		return nil, err
	}
	o.step("prepared")
	if o.DryRun {
		r.discard()
		return r.out, nil
	}
	return m.start(ctx, r, sigs)
}

// A linuxRun is a run prepared up to bubblewrap's command line.
type linuxRun struct {
	p *policy.Policy
	o Options
	// out holds the bubblewrap command line (Argv, ArgvLines).
	out *Result
	// env is bubblewrap's environment: removed variables gone, masked
	// ones with their stand-ins.
	env              []string
	tty              *hostTerminal    // nil without a terminal
	text, key, token string           // the command's attribution and the proxy password
	self             string           // this binary
	tls              *credentials.TLS // nil without tlsTerminate
	masks            *credentials.Masking
	prog             []byte // the seccomp program
	reg              *placeholders.Registry
	res              *resolve.Result
	store            *quarantine.Store // nil when nothing is quarantined
	run              *placeholders.Run // the run's record, from prepare on
	// snap is what the write roots held before the command started.
	snap *quarantine.Snapshot
	// limits is how the plan's resource limits are enforced here.
	limits *limitsPlan
	// ll reads the second layer's refusals, once llOpened has it; nil
	// when this run cannot report them.
	ll       *landlockAudit
	llOpened chan *landlockAudit
	// Scratch space of the run ("" when not made): the source of
	// placeholder directories, TMPDIR, the trust bundle's directory,
	// the masked credential files' directory.
	empty, tmp, tlsDir, maskDir string
}

// discard removes the scratch space of a run that does not start, and
// its record.
func (r *linuxRun) discard() {
	if r.run != nil {
		r.run.Release()
	}
	if r.empty != "" {
		os.Remove(r.empty)
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
func (m *Manager) prepare(p *policy.Policy, argv []string, o Options) (*linuxRun, error) {
	r := &linuxRun{p: p, o: o}
	// A command run from a terminal gets one of its own (terminal_linux.go).
	r.tty = newHostTerminal(o.Stdin, o.Stdout, o.Stderr)
	_, r.text, r.key = o.attribution(argv)
	var err error
	if r.token, err = randomHex(16); err != nil { // this run's proxy password
		return nil, err
	}
	if err := r.prepareCredentials(m); err != nil {
		return nil, err
	}
	if err := checkCwd(p, o.Home, o.Cwd); err != nil {
		return nil, err
	}
	if !o.DryRun {
		createWriteDirs(p, o.Home, o.Cwd, o.Stderr)
	}
	lp := o.LinuxPlan
	if lp == nil {
		if lp, err = compiledPlan(p); err != nil {
			return nil, err
		}
	}
	steps, prog, err := lp.read(o.Home, o.Cwd)
	if err != nil {
		return nil, err
	}
	r.prog = prog
	if r.self, err = os.Executable(); err != nil {
		return nil, err
	}
	// Placeholders and scratch space are recorded before bubblewrap makes
	// them, so that they are removed however this run ends.
	if r.reg, err = placeholders.Default(); err != nil {
		return nil, err
	}
	if pending, _ := r.reg.Sweep(false); pending && !o.DryRun {
		// A killed run still owes the check of its write roots: a reaper
		// does it, off this run's way.
		startChecker(r.self, r.reg, o.debug)
	}
	// Registered before it looks at the tree: a placeholder this run
	// finds is not removed under it by another run's clean-up.
	if r.run, err = r.reg.Begin(); err != nil {
		return nil, err
	}
	if r.empty, err = r.reg.Scratch(); err != nil {
		r.discard()
		return nil, err
	}
	if err := r.prepareHost(&steps); err != nil {
		r.discard()
		return nil, err
	}
	env := proxyEnv(r.token, r.key, r.self, HTTPPort, SOCKSPort)
	if err := r.trustBundle(&env, &steps); err != nil {
		r.discard()
		return nil, err
	}
	if r.res, err = resolve.Resolve(steps, r.host(env)); err != nil {
		r.discard()
		return nil, err
	}
	r.limits = planLimits(r.res.Limits)
	for _, n := range r.limits.notes {
		o.debug("limits: " + n)
	}
	for _, w := range r.limits.warnings {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", w)
	}
	r.out = r.commandLine(steps, argv)
	return r, nil
}

// prepareCredentials prepares TLS termination and the masked
// credentials (runtime/credentials): every error (an unreadable CA file,
// a masked variable that is not set) comes before anything runs.
func (r *linuxRun) prepareCredentials(m *Manager) error {
	p, o := r.p, r.o
	var err error
	if p.Network.TLS != nil {
		if r.tls, err = credentials.NewTLS(p.Network.TLS, o.Home, o.Cwd, m.tls.Load, o.debug); err != nil {
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
func (r *linuxRun) prepareHost(steps *[]bwrap.Step) error {
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
	// The command's TMPDIR: a directory of this run, bound where the plan
	// says, removed with the other scratch directories.
	for _, s := range *steps {
		if s.Directive == bwrap.PrivateTmp {
			if err := tmpMountPoint(s.Operand); err != nil {
				return err
			}
			var err error
			if r.tmp, err = r.reg.Tmp(); err != nil {
				return err
			}
		}
	}
	return nil
}

// state are srt's own files on this host (see Options.State): the
// caller's, the registry and the tree cache, the quarantine.
func (r *linuxRun) state() map[policy.StateKind][]string {
	out := map[policy.StateKind][]string{}
	for k, v := range r.o.State {
		out[k] = append(out[k], v...)
	}
	out[policy.StateRegistry] = append(out[policy.StateRegistry], r.reg.Dir, r.reg.TreeCache())
	out[policy.StateQuarantine] = append(out[policy.StateQuarantine], r.store.Dir)
	return out
}

// trustBundle writes the trust bundle into a scratch directory of the run
// (removed with it, by the reaper if srt is killed), bound read-only into
// the sandbox, points the clients' variables at it, and hides the CA key
// file, if any.
func (r *linuxRun) trustBundle(env *[]string, steps *[]bwrap.Step) error {
	if r.tls == nil {
		return nil
	}
	var err error
	if r.tlsDir, err = r.reg.Scratch(); err != nil {
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
func (r *linuxRun) host(env []string) resolve.Host {
	o := r.o
	h := resolve.Host{
		Home: o.Home, Cwd: o.Cwd, EmptyDir: r.empty, SeccompFD: fdSeccomp, TmpDir: r.tmp, State: r.state(),
		ProxyEnv:  externalEnv(env, r.p.Network, HTTPPort, SOCKSPort),
		MaskValue: r.masks.Value,
	}
	// Masked credential files: a copy with the secrets replaced, in a
	// scratch directory of the run, bound read-only over the real file.
	h.MaskedCopy = r.masks.FileCopier(r.p.Filesystem, func() (string, error) {
		if r.maskDir == "" {
			d, err := r.reg.Scratch()
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
	return h
}

// commandLine is bubblewrap's command line for the resolved plan, with
// what the runtime adds after it, and the line of linux/bwrap.args each
// word came from (0 for the runtime's own).
func (r *linuxRun) commandLine(steps []bwrap.Step, argv []string) *Result {
	o, res := r.o, r.res
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
	if r.tty != nil {
		initArgs = append(initArgs, r.tty.initArg())
	}
	ll, why := landlockInitArgs(res.Landlock, landlockABI())
	if why != "" {
		o.debug(why)
	}
	full := append([]string{o.Bwrap}, res.Args...)
	full = append(full, "--chdir", o.Cwd, "--as-pid-1", "--info-fd", strconv.Itoa(fdInfo),
		"--", "/proc/self/fd/"+strconv.Itoa(fdSelf))
	full = append(full, initArgs...)
	lines := append([]int{0}, res.Lines...)
	lines = append(lines, make([]int, len(full)-len(lines))...)
	// The init step's options of the second layer come from @landlock.
	for range ll {
		lines = append(lines, res.Landlock.Line)
	}
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

// start runs a prepared run: it registers its scratch space with the
// reaper, starts bubblewrap, serves the proxies on the listeners the
// sandbox hands over, and supervises the command until it ends.
func (m *Manager) start(ctx context.Context, r *linuxRun, sigs <-chan os.Signal) (*Result, error) {
	o, out := r.o, r.out
	run, check, reaped, err := r.register()
	if err != nil {
		return nil, err
	}
	defer func() {
		reaped()
		run.Release()
		o.step("released")
	}()
	o.step("registered")

	cg := r.limits.cg
	if err := cg.make(r.limits.limits); err != nil {
		cg.remove()
		return nil, err
	}
	defer func() {
		if err := cg.remove(); err != nil {
			o.debug("limits: " + err.Error())
		}
	}()
	if cg != nil && len(cg.made) > 0 {
		if err := run.Cgroups(cg.made); err != nil {
			return nil, err
		}
	}

	files, closeAll, err := childFiles(r.prog, r.self)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	r.openLandlockAudit()
	defer r.closeLandlockAudit()
	hostEnd := files.hostEnd
	cmd := r.bubblewrap(files)
	if r.tty != nil {
		defer r.tty.finish()
		if err := r.tty.makeRaw(); err != nil {
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting bubblewrap: %w", err)
	}
	o.step("bubblewrap started")
	files.closeChildEnds()
	// The sandbox's first process (our init role, PID 1 inside) as the
	// host sees it: signals for the command go to it, and it forwards them.
	initPID, cgPID, llPID := make(chan int, 1), make(chan int, 1), make(chan int, 1)
	go func() {
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		json.NewDecoder(files.info).Decode(&info)
		initPID <- info.ChildPID
		cgPID <- info.ChildPID
		llPID <- info.ChildPID
	}()
	// The sandbox enters its cgroups before the command starts, and the
	// threads that may make its second layer are listed.
	ready := func() error {
		r.expectLandlock(llPID)
		if cg == nil || len(cg.made) == 0 {
			return nil
		}
		pid := <-cgPID
		if pid <= 0 {
			return errors.New("bubblewrap did not name the sandbox's first process, which its cgroups need")
		}
		return cg.join(pid)
	}

	// What the write roots hold is recorded while bubblewrap starts; the
	// command starts once it is on disk (see serve).
	recorded := make(chan error, 1)
	if check != nil {
		go func() {
			err := r.snapshot(run, *check)
			o.step("recorded")
			recorded <- err
		}()
	} else {
		recorded <- nil
	}
	var rec runRecord
	stopServing, herr := m.serve(ctx, r, hostEnd, &rec, recorded, ready)
	defer stopServing()
	if o.Started != nil {
		o.Started()
	}

	// Signals for the command go to the sandbox's first process (our init
	// role, PID 1 inside), which forwards them, once bubblewrap names it.
	init := &target{}
	go func() { init.set(<-initPID) }()
	stopResize := r.tty.followSize()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() {
		cmd.Process.Kill() // bubblewrap; the sandbox dies with it
		init.kill()        // PID 1 of its namespace: all of it
	}
	cpuHit, stopWatch := r.watchCPU(cg, herr == nil, kill)
	werr := supervise(ctx, done, sigs, init.signal, kill)
	stopWatch()
	stopResize()
	o.step("command ended")
	if r.tty != nil {
		r.tty.finish()
	}
	// The listeners close on return; decisions still in flight are
	// recorded, but the result holds those made while the command ran.
	out.Violations = rec.entries()
	if check != nil && r.snap != nil {
		out.Quarantined = quarantineWritten(r.store, *check, r.snap, o)
		for _, it := range out.Quarantined {
			out.Violations = append(out.Violations, violations.Entry{Line: fmt.Sprintf("deny file-write %q (%s; quarantined as %s)", it.Path, it.Why, it.ID), Time: it.Time})
		}
		run.Checked(r.treeFile(*check))
		o.step("checked")
	}
	out.ExitCode = exitCode(cmd.ProcessState)
	r.reportLimits(m, out, cpuHit)
	r.reportLandlock(m, out)
	if herr != nil && (out.ExitCode == 0 || r.snap == nil && check != nil) {
		return out, fmt.Errorf("the sandbox did not start the command: %w", herr)
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return out, werr
	}
	return out, nil
}

// serve serves the proxies on the listeners the sandbox's init step hands
// over (through hostEnd, which it closes), recording decisions in rec, and
// attaches the sandbox's terminal. herr says why the hand-off failed; the
// command then does not start. stop closes the listeners and every
// connection of the run's proxies, and returns once they are all gone.
func (m *Manager) serve(ctx context.Context, r *linuxRun, hostEnd *os.File, rec *runRecord, recorded <-chan error, ready func() error) (stop func(), herr error) {
	egress := m.runEgress(r.key, r.text, r.token, rec)
	if r.tls != nil {
		egress.TLS = r.tls.Terminator
	}
	if inject := r.masks.Injector(); inject != nil {
		// credentials.sigv4 follows policy updates from the next request.
		inject.SigV4 = func() proxy.SigV4Policy { return *m.sigv4.Load() }
		egress.Inject = inject
	}
	listeners, master, herr := receiveHandoff(hostEnd, r.tty != nil)
	r.o.step("handed over")
	if herr == nil {
		// The command starts once its terminal is set up and the write
		// roots are recorded (without this byte, the init step ends when
		// the socket closes, below).
		if r.tty != nil {
			herr = r.tty.attach(master)
		}
		if err := <-recorded; herr == nil && err != nil {
			herr = fmt.Errorf("recording the write roots for the check after the run: %w (the command must not run unchecked)", err)
		}
		if herr == nil {
			herr = ready()
		}
		if herr == nil {
			_, herr = hostEnd.Write(r.ll.startMessage())
			r.o.step("command started")
		}
		if herr != nil {
			listeners[0].Close()
			listeners[1].Close()
		}
	} else {
		<-recorded
	}
	hostEnd.Close()
	if herr != nil {
		return func() {}, herr
	}
	for _, n := range externalNote(r.p.Network) {
		r.o.debug(n)
	}
	return serveProxies(ctx, egress, r.p.Network, listeners[0], listeners[1], r.o.Log), nil
}

// register records the run's placeholders and scratch space, and the
// write roots to check for protected names, in the registry, and starts
// the reaper: a watcher outside the sandbox that sweeps the registry when
// srt is gone, however it goes (SIGKILL included). It waits for the end
// of a pipe only srt holds open, then for this run's lock; it starts
// alongside bubblewrap, off the critical path, and until it runs the
// sweep at the next start is the fallback. reaped waits for it.
func (r *linuxRun) register() (run *placeholders.Run, check *quarantine.Spec, reaped func(), err error) {
	var scratch []string
	if len(r.res.Placeholders) > 0 {
		scratch = append(scratch, r.empty)
	} else {
		os.Remove(r.empty)
	}
	for _, d := range []string{r.tmp, r.tlsDir, r.maskDir} {
		if d != "" {
			scratch = append(scratch, d)
		}
	}
	storeDir := ""
	if fs := r.p.Filesystem; fs.MandatoryScan != nil && !fs.Disabled || len(r.res.Watch) > 0 {
		check = &quarantine.Spec{Watch: r.res.Watch, Home: r.o.Home, GitConfig: true}
		if fs.MandatoryScan != nil && !fs.Disabled {
			check.Roots, check.GitConfig = r.res.WriteRoots, fs.MandatoryScan.GitConfig
		}
		storeDir = r.store.Dir
	}
	run = r.run
	if err = run.Set(r.res.Placeholders, check, storeDir, scratch...); err != nil {
		r.discard()
		return nil, nil, nil, err
	}
	reaper := make(chan func(), 1)
	if scratch == nil && check == nil && !r.limits.cg.any() {
		// Nothing to clean up or check after this run: no reaper.
		reaper <- func() {}
	} else {
		go startReaperAsync(r.self, r.reg, run.Record(), reaper, r.o.debug)
	}
	return run, check, func() { (<-reaper)() }, nil
}

// bubblewrap is the command that starts the sandbox.
func (r *linuxRun) bubblewrap(files *childFileSet) *exec.Cmd {
	o := r.o
	cmd := exec.Command(o.Bwrap, r.out.Argv[1:]...)
	// Removed variables are gone and masked ones are stand-ins already in
	// what bubblewrap gets: no process of the run holds a real value.
	cmd.Env = r.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	if r.tty != nil {
		// bubblewrap gets no descriptor of the outer terminal: the command
		// uses the sandbox's own, and what bubblewrap or the init step
		// say goes through a pipe. (bubblewrap would also bind a terminal
		// on its stdout to /dev/console inside.)
		for _, fd := range r.tty.fds {
			switch fd {
			case 0:
				cmd.Stdin = nil
			case 1:
				cmd.Stdout = struct{ io.Writer }{o.Stdout}
			case 2:
				cmd.Stderr = struct{ io.Writer }{o.Stderr}
			}
		}
		cmd.WaitDelay = 2 * time.Second
	}
	cmd.ExtraFiles = files.extra
	// bubblewrap dies with srt (Pdeathsig), and lives in its own process
	// group, so that a terminal's ^C reaches srt, which forwards it to the
	// command, rather than killing bubblewrap and the sandbox with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// snapshot records what the write roots hold before the command starts,
// with the run (a reaper checks a killed run against it), starting from
// what the last check of the same roots saw.
func (r *linuxRun) snapshot(run *placeholders.Run, spec quarantine.Spec) error {
	cache, _ := quarantine.ReadSnapshot(r.treeFile(spec))
	s, notes := quarantine.Snap(spec, cache)
	for _, n := range notes {
		fmt.Fprintf(r.o.Stderr, "srt: warning: the check after the run: %s\n", n)
	}
	if err := run.Snapshot(s); err != nil {
		return err
	}
	r.snap = s
	return nil
}

// treeFile is where the last check of spec's roots is kept.
func (r *linuxRun) treeFile(spec quarantine.Spec) string {
	h := sha256.New()
	for _, root := range spec.Roots {
		fmt.Fprintf(h, "%s\x00", root)
	}
	fmt.Fprintf(h, "\x00%s", spec.Home)
	return filepath.Join(r.reg.TreeCache(), hex.EncodeToString(h.Sum(nil)[:16]))
}

// watchCPU stops the sandbox (kill) once its cgroup has used the CPU time
// of limits.cpuSeconds, when the run has such a cgroup and its command
// started; hit says whether it did, once stop has been called.
func (r *linuxRun) watchCPU(cg *cgroupSet, started bool, kill func()) (hit func() bool, stop func()) {
	var limit int64
	for _, l := range r.limits.limits {
		if l.Kind == policy.LimitCPU {
			limit = l.Value
		}
	}
	if limit == 0 || !cg.has("cpu") || !started {
		return func() bool { return false }, func() {}
	}
	done := make(chan struct{})
	h := cg.watchCPU(time.Duration(limit)*time.Second, kill, done)
	return func() bool {
			select {
			case <-h:
				return true
			default:
				return false
			}
		}, func() {
			close(done)
		}
}

// reportLimits says which resource limits the sandbox reached: on the
// command's standard error, in the result, and as violations.
func (r *linuxRun) reportLimits(m *Manager, out *Result, cpuHit func() bool) {
	now := time.Now()
	for _, h := range r.limits.hits(cpuHit(), out.ExitCode) {
		fmt.Fprintf(r.o.Stderr, "srt: the sandbox reached %s = %d%s: %s\n", h.Key, h.Value, limitUnit(h.Kind), h.What)
		out.Limits = append(out.Limits, h)
		e := h.violation(now)
		if kept, ok := m.store.Add(e.Line, r.key, e.Time); ok {
			out.Violations = append(out.Violations, kept)
		}
	}
}
