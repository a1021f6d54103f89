//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/emit/bwrap"
	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/violations"
)

// Descriptors the init role inherits.
const (
	fdSeccomp = 3 // read by bubblewrap, not by the init
	fdHandoff = 4 // one end of the socket pair to the host process
	fdSelf    = 5 // this binary, opened for exec
	fdInfo    = 6 // bubblewrap writes {"child-pid": N} here
)

// Run runs argv (a program and its arguments) in a sandbox of the
// Manager's policy, as it is when the command starts. When ctx ends, the
// command gets SIGTERM, and SIGKILL 2 s later.
func (m *Manager) Run(ctx context.Context, argv []string, o Options) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	p := m.Policy()
	// From here on, SIGINT, SIGTERM, SIGHUP and SIGQUIT are for the
	// command: they are forwarded to it once it runs, never left to kill
	// srt (which would leave a terminal in raw mode).
	sigs := make(chan os.Signal, 8)
	if o.ForwardSignals {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
		defer signal.Stop(sigs)
	}
	// A command run from a terminal gets one of its own (terminal_linux.go).
	tty := newHostTerminal(o.Stdin, o.Stdout, o.Stderr)
	initArgs := []string{InitArg}
	if tty != nil {
		initArgs = append(initArgs, tty.initArg())
	}
	_, text, key := o.attribution(argv)
	token, err := randomHex(16) // this run's proxy password
	if err != nil {
		return nil, err
	}
	// TLS termination and masked credentials: every error (an unreadable
	// CA file, a masked variable that is not set) before anything runs.
	var rt *runTLS
	if p.Network.TLS != nil {
		if rt, err = newRunTLS(p.Network.TLS, o.Home, o.Cwd, m.tls.Load, o.debug); err != nil {
			return nil, err
		}
	}
	masks, err := maskedEnv(o.Env, p.Env, p.Network.Allowed, func(msg string) {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", msg)
	})
	if err != nil {
		return nil, err
	}
	baseEnv := masks.env
	for _, k := range masks.inject.AWS {
		o.debug(fmt.Sprintf("credentials: %s is an AWS key: SigV4 requests signed with its stand-in are re-signed for the hosts all its variables are injected into; credentials.sigv4 follows policy updates, the pairs and masked variables are fixed for the run", k.Name))
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
	// Placeholders and scratch space are recorded before bubblewrap makes
	// them, so that they are removed however this run ends.
	reg, err := placeholders.Default()
	if err != nil {
		return nil, err
	}
	reg.Sweep()
	empty, err := reg.Scratch()
	if err != nil {
		return nil, err
	}

	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	// The protected names the command writes below its write roots are
	// moved to the quarantine when it ends (the sandbox pins only those
	// that exist when it starts).
	var store *quarantine.Store
	if p.Filesystem.MandatoryScan != nil && !p.Filesystem.Disabled {
		dir, err := quarantine.DefaultDir()
		if err == nil {
			store, err = quarantine.Open(dir)
		}
		if err != nil {
			return nil, fmt.Errorf("the quarantine for protected names written in the sandbox is not usable: %w (set XDG_STATE_HOME to a directory of your own)", err)
		}
	}
	// srt's own state is read-only in the sandbox (a command that could
	// rewrite the policy cache or the placeholder registry could weaken
	// or disturb a later run; one that could write the quarantine could
	// plant an item for the user to release).
	protect := append(append([]string(nil), o.Protect...), reg.Dir)
	if store != nil {
		protect = append(protect, store.Dir)
	}
	for _, d := range protect {
		steps = append(steps, bwrap.Step{Directive: bwrap.DenyWrite, Operand: filepath.Clean(d)})
	}
	// The command's TMPDIR: a directory of this run, bound where the plan
	// says, removed with the other scratch directories.
	var tmp string
	for _, s := range steps {
		if s.Directive == bwrap.PrivateTmp {
			if err := tmpMountPoint(s.Operand); err != nil {
				os.Remove(empty)
				return nil, err
			}
			if tmp, err = reg.Tmp(); err != nil {
				os.Remove(empty)
				return nil, err
			}
		}
	}
	env := proxyEnv(token, key, self, HTTPPort, SOCKSPort)
	// The trust bundle lives in a scratch directory of the run (removed
	// with it, by the reaper if srt is killed), bound read-only into the
	// sandbox; the CA key file, if any, is hidden there.
	tlsDir := ""
	if rt != nil {
		if tlsDir, err = reg.Scratch(); err != nil {
			os.Remove(empty)
			removeTmp(tmp)
			return nil, err
		}
		bundle := filepath.Join(tlsDir, bundleName)
		if err = os.WriteFile(bundle, rt.bundle, 0o444); err != nil {
			os.Remove(empty)
			removeTmp(tmp)
			os.RemoveAll(tlsDir)
			return nil, err
		}
		for _, v := range caVars {
			env = append(env, v+"="+bundle)
		}
		if rt.keyPath != "" {
			steps = append(steps, bwrap.Step{Directive: bwrap.DenyRead, Operand: rt.keyPath})
		}
	}
	host := resolve.Host{
		Home: o.Home, Cwd: o.Cwd, EmptyDir: empty, SeccompFD: fdSeccomp, TmpDir: tmp,
		ProxyEnv: externalEnv(env, p.Network, HTTPPort, SOCKSPort),
		MaskValue: func(name string) (string, bool) {
			v, ok := masks.values[name]
			return v, ok
		},
	}
	// Masked credential files: a copy with the secrets replaced, in a
	// scratch directory of the run, bound read-only over the real file.
	maskDir := ""
	host.MaskedCopy = masks.fileCopier(p.Filesystem, func() (string, error) {
		if maskDir == "" {
			d, err := reg.Scratch()
			if err != nil {
				return "", err
			}
			maskDir = d
		}
		return maskDir, nil
	})
	if n, err := strconv.Atoi(envValue(o.Env, "GIT_CONFIG_COUNT")); err == nil {
		host.GitConfigCount = n
	}
	res, err := resolve.Resolve(steps, host)
	// discard removes the scratch space of a run that does not start.
	discard := func() {
		os.Remove(empty)
		removeTmp(tmp)
		for _, d := range []string{tlsDir, maskDir} {
			if d != "" {
				os.RemoveAll(d)
			}
		}
	}
	if err != nil {
		discard()
		return nil, err
	}
	if tlsDir != "" {
		res.Args = append(res.Args, "--ro-bind", tlsDir, tlsDir)
		res.Lines = append(res.Lines, 0, 0, 0)
	}
	for _, n := range res.Notes {
		o.debug("resolve: " + n)
	}
	if rootWritable(steps) {
		// Everything is writable: srt's state is bound read-only over it.
		for _, d := range protect {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				res.Args = append(res.Args, "--ro-bind", d, d)
				res.Lines = append(res.Lines, 0, 0, 0)
			}
		}
	}
	// Other runs' temporary directories, last: nothing reopens them.
	if fi, err := os.Stat(reg.TmpDir); err == nil && fi.IsDir() {
		res.Args = append(res.Args, "--tmpfs", reg.TmpDir)
	}
	full := append([]string{o.Bwrap}, res.Args...)
	full = append(full, "--chdir", o.Cwd, "--as-pid-1", "--info-fd", strconv.Itoa(fdInfo),
		"--", "/proc/self/fd/"+strconv.Itoa(fdSelf))
	full = append(full, initArgs...)
	full = append(full, "--")
	full = append(full, argv...)
	lines := append([]int{0}, res.Lines...)
	lines = append(lines, make([]int, len(full)-len(lines))...)
	out := &Result{Argv: full, ArgvLines: lines}
	if o.DryRun {
		discard()
		return out, nil
	}

	var scratch []string
	if len(res.Placeholders) > 0 {
		scratch = append(scratch, empty)
	} else {
		os.Remove(empty)
	}
	if tmp != "" {
		scratch = append(scratch, tmp)
	}
	for _, d := range []string{tlsDir, maskDir} {
		if d != "" {
			scratch = append(scratch, d)
		}
	}
	var check *quarantine.Spec
	storeDir := ""
	if store != nil {
		check = &quarantine.Spec{Roots: res.WriteRoots, GitConfig: p.Filesystem.MandatoryScan.GitConfig, Home: o.Home}
		storeDir = store.Dir
	}
	run, err := reg.RegisterChecked(res.Placeholders, check, storeDir, scratch...)
	if err != nil {
		for _, s := range scratch {
			os.RemoveAll(s)
		}
		return nil, err
	}
	defer run.Release()
	// A watcher outside the sandbox sweeps the registry when srt is gone,
	// however it goes (SIGKILL included): it waits for the end of a pipe
	// only srt holds open, then for this run's lock.
	// It starts alongside bubblewrap, off the critical path; until it runs,
	// the sweep at the next start is the fallback.
	reaper := make(chan func(), 1)
	if scratch == nil && check == nil {
		// Nothing to clean up or check after this run: no reaper.
		reaper <- func() {}
	} else {
		go startReaperAsync(self, reg, run.Record(), reaper, o.debug)
	}
	defer func() { (<-reaper)() }()

	files, closeAll, err := childFiles(prog, self)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	hostEnd := files.hostEnd

	cmd := exec.Command(o.Bwrap, full[1:]...)
	// Removed variables are gone and masked ones are sentinels already in
	// what bubblewrap gets: no process of the run holds a real value.
	cmd.Env = baseEnv
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	if tty != nil {
		// bubblewrap gets no descriptor of the outer terminal: the command
		// uses the sandbox's own, and what bubblewrap or the init step
		// say goes through a pipe. (bubblewrap would also bind a terminal
		// on its stdout to /dev/console inside.)
		for _, fd := range tty.fds {
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
	if tty != nil {
		defer tty.finish()
		if err := tty.makeRaw(); err != nil {
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting bubblewrap: %w", err)
	}
	files.closeChildEnds()
	// The sandbox's first process (our init role, PID 1 inside) as the
	// host sees it: signals for the command go to it, and it forwards them.
	initPID := make(chan int, 1)
	go func() {
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		json.NewDecoder(files.info).Decode(&info)
		initPID <- info.ChildPID
	}()

	// Serve the proxies on the listeners the init role hands over.
	var rec runRecord
	egress, endRun := m.runEgress(ctx, key, text, token, &rec)
	defer endRun()
	if rt != nil {
		egress.TLS = rt.term
	}
	if inject := masks.injector(); inject != nil {
		// credentials.sigv4 follows policy updates from the next request.
		inject.SigV4 = func() proxy.SigV4Policy { return *m.sigv4.Load() }
		egress.Inject = inject
	}
	listeners, master, herr := receiveHandoff(hostEnd, tty != nil)
	if herr == nil && tty != nil {
		// The command starts once its terminal is set up (without this
		// byte, the init step ends when the socket closes, below).
		if herr = tty.attach(master); herr == nil {
			_, herr = hostEnd.Write([]byte{1})
		}
		if herr != nil {
			listeners[0].Close()
			listeners[1].Close()
		}
	}
	hostEnd.Close()
	if herr == nil {
		for _, n := range externalNote(p.Network) {
			o.debug(n)
		}
		serveProxies(egress, p.Network, listeners[0], listeners[1], o.Log)
		defer listeners[0].Close()
		defer listeners[1].Close()
	}
	if o.Started != nil {
		o.Started()
	}

	// Signals for the command go to the sandbox's first process (our init
	// role, PID 1 inside), which forwards them, once bubblewrap names it.
	init := &target{}
	go func() { init.set(<-initPID) }()
	stopResize := func() {}
	if tty != nil {
		winch := make(chan os.Signal, 1)
		signal.Notify(winch, syscall.SIGWINCH)
		tty.resize() // a change before the line above
		end, ended := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(ended)
			for {
				select {
				case <-winch:
					tty.resize()
				case <-end:
					return
				}
			}
		}()
		stopResize = func() { signal.Stop(winch); close(end); <-ended }
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	werr := supervise(ctx, done, sigs, init.signal, func() {
		cmd.Process.Kill() // bubblewrap; the sandbox dies with it
		init.kill()        // PID 1 of its namespace: all of it
	})
	stopResize()
	if tty != nil {
		tty.finish()
	}
	// The listeners close on return; decisions still in flight are
	// recorded, but the result holds those made while the command ran.
	out.Violations = rec.entries()
	if check != nil {
		out.Quarantined = quarantineWritten(store, *check, o)
		for _, it := range out.Quarantined {
			out.Violations = append(out.Violations, violations.Entry{Line: fmt.Sprintf("deny file-write %s (%s; quarantined as %s)", it.Path, it.Why, it.ID), Time: it.Time})
		}
		run.Checked()
	}
	out.ExitCode = exitCode(cmd.ProcessState)
	if herr != nil && out.ExitCode == 0 {
		return out, fmt.Errorf("the sandbox's init step did not hand over its listeners: %w", herr)
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return out, werr
	}
	return out, nil
}

func (o *Options) defaults() error {
	if o.Bwrap == "" {
		path, err := exec.LookPath("bwrap")
		if err != nil {
			return errors.New("bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap) or set bwrapPath")
		}
		o.Bwrap = path
	}
	return o.hostDefaults()
}

func (o *Options) debug(msg string) {
	if o.Log != nil {
		o.Log.Debug(msg)
	}
}

type childFileSet struct {
	extra   []*os.File // fd 3, 4, 5, 6 in the child
	hostEnd *os.File
	info    *os.File // the read end of bubblewrap's --info-fd
	child   []*os.File
}

func (c *childFileSet) closeChildEnds() {
	for _, f := range c.child {
		f.Close()
	}
}

// childFiles prepares fd 3 (the seccomp program, nil for none), fd 4 (the
// hand-off socket) and fd 5 (this binary).
func childFiles(prog []byte, self string) (*childFileSet, func(), error) {
	set := &childFileSet{}
	closeAll := func() {
		for _, f := range append(set.child, set.hostEnd, set.info) {
			if f != nil {
				f.Close()
			}
		}
	}
	// The seccomp program through a pipe (bwrap reads it to EOF).
	r, w, err := os.Pipe()
	if err != nil {
		return nil, closeAll, err
	}
	go func() { w.Write(prog); w.Close() }()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, closeAll, err
	}
	set.hostEnd = os.NewFile(uintptr(pair[0]), "srt-handoff-host")
	childEnd := os.NewFile(uintptr(pair[1]), "srt-handoff-child")
	exe, err := os.Open(self)
	if err != nil {
		return nil, closeAll, err
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, closeAll, err
	}
	set.info = infoR
	set.extra = []*os.File{r, childEnd, exe, infoW}
	set.child = []*os.File{r, childEnd, exe, infoW}
	return set, closeAll, nil
}

// receiveHandoff waits for the init role's two listening sockets and,
// with tty, the master side of the command's terminal.
func receiveHandoff(f *os.File, tty bool) (_ []net.Listener, master int, _ error) {
	want := 2
	if tty {
		want = 3
	}
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(3*4))
	// Close-on-exec from the start: a bubblewrap another run starts
	// meanwhile must not inherit this sandbox's listeners.
	n, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, -1, err
	}
	if n == 0 && oobn == 0 {
		return nil, -1, errors.New("the init step ended without handing over")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, -1, fmt.Errorf("bad hand-off message: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != want {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, -1, fmt.Errorf("bad hand-off rights: %d descriptors, want %d (%v)", len(fds), want, err)
	}
	master = -1
	if tty {
		master = fds[2]
	}
	var out []net.Listener
	for i, fd := range fds[:2] {
		lf := os.NewFile(uintptr(fd), "listener-"+strconv.Itoa(i))
		l, err := net.FileListener(lf)
		lf.Close()
		if err != nil {
			for _, l := range out {
				l.Close()
			}
			if master >= 0 {
				unix.Close(master)
			}
			return nil, -1, err
		}
		out = append(out, l)
	}
	return out, master, nil
}

// Init is the init role: it runs as the first process in the sandbox
// (PID 1; argv: InitArg [--tty=FDS] -- command...), under the seccomp
// program already. It opens the proxy listeners in the sandbox's network
// namespace and, with --tty, a pseudo-terminal for the standard
// descriptors FDS; hands them (the terminal's master side) to the host
// process; closes everything the command must not inherit; runs the
// command as its child, in a process group of its own (a session of its
// own, on the terminal, with --tty); forwards signals to that group; and
// exits with the command's status. It returns only on failure.
func Init(args []string) error {
	// PID 1 ignores signals it has no handler for, so the command runs as
	// its child; signals are caught from the start and delivered once it
	// runs.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	var ttyFDs []int
	if len(args) > 0 && strings.HasPrefix(args[0], ttyArg) {
		var err error
		if ttyFDs, err = parseTTYArg(strings.TrimPrefix(args[0], ttyArg)); err != nil {
			return err
		}
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("no command")
	}
	var fds []int
	for _, port := range []int{HTTPPort, SOCKSPort} {
		l, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			return fmt.Errorf("listening on 127.0.0.1:%d: %w", port, err)
		}
		f, err := l.(*net.TCPListener).File()
		if err != nil {
			return err
		}
		l.Close()
		fds = append(fds, int(f.Fd()))
	}
	var master, slave *os.File
	if ttyFDs != nil {
		var err error
		if master, slave, err = openInnerTerminal(); err != nil {
			return err
		}
		fds = append(fds, int(master.Fd()))
	}
	if err := unix.Sendmsg(fdHandoff, []byte{1}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("handing the listeners over: %w", err)
	}
	if master != nil {
		// The host sets the terminal up (modes, window size) and says so.
		if n, err := unix.Read(fdHandoff, make([]byte, 1)); n != 1 {
			return fmt.Errorf("the host did not take the terminal: %v", err)
		}
		fds = fds[:2] // the master stays open here: its foreground job is read from it
	}
	for _, fd := range append(fds, fdHandoff, fdSelf, fdSeccomp, fdInfo) {
		unix.Close(fd)
	}
	if err := closeInherited(); err != nil {
		return err
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if slave != nil {
		std := []*os.File{os.Stdin, os.Stdout, os.Stderr}
		for _, fd := range ttyFDs {
			std[fd] = slave
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = std[0], std[1], std[2]
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: ttyFDs[0]}
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "srt: %v\n", err)
			os.Exit(127)
		}
		return err
	}
	if slave != nil {
		slave.Close()
	}
	go forwardSignals(sigs, cmd.Process.Pid, master)
	cmd.Wait()
	os.Exit(exitCode(cmd.ProcessState))
	return nil
}

// tmpMountPoint makes sure dir exists on the host as a directory, the
// mount point of the run's TMPDIR: bubblewrap cannot create it in the
// read-only root. It stays, empty, for later runs; what the host had
// there is hidden from the command. A symlink or a file there is refused
// rather than followed.
func tmpMountPoint(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.Mkdir(dir, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
			fi, err = os.Lstat(dir)
		}
	}
	if err != nil {
		return fmt.Errorf("the sandbox's TMPDIR is mounted at %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the sandbox's TMPDIR is mounted at %s, which is not a directory on this host (%s): remove it", dir, fi.Mode().Type())
	}
	return nil
}

// removeTmp removes a run's temporary directory that was never
// registered.
func removeTmp(dir string) {
	if dir != "" {
		os.RemoveAll(dir)
	}
}

// forwardSignals delivers each signal to the command's process group (a
// shell and the program it waits for both see ^C, as on a terminal) and,
// on a terminal, to its foreground job when that is another group (the
// job an interactive shell runs).
func forwardSignals(sigs <-chan os.Signal, pgid int, master *os.File) {
	for s := range sigs {
		sig := s.(syscall.Signal)
		unix.Kill(-pgid, sig)
		if master != nil {
			if fg, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP); err == nil && fg > 1 && fg != pgid {
				unix.Kill(-fg, sig)
			}
		}
	}
}

// startReaperAsync starts the reaper and sends its stop function.
func startReaperAsync(self string, reg *placeholders.Registry, record string, out chan<- func(), debug func(string)) {
	stop, err := startReaper(self, reg, record)
	if err != nil {
		debug("no reaper: " + err.Error())
		stop = func() {}
	}
	out <- stop
}

// startReaper starts the reaper in a session of its own; stop lets it go
// once the run has cleaned up after itself.
func startReaper(self string, reg *placeholders.Registry, record string) (stop func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A shell waits (it starts in a fraction of the time srt does); srt is
	// run only when there is something to do.
	cmd := exec.Command("/bin/sh", "-c", `while read -r _; do :; done; exec "$0" `+ReapArg+` "$1" "$2" "$3"`, self, reg.Dir, record, reg.TmpDir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	go cmd.Wait()
	return func() { w.Close() }, nil
}

// Reap is the reaper (see ReapArg).
func Reap(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: srt " + ReapArg + " DIR RECORD TMPDIR")
	}
	io.Copy(io.Discard, os.Stdin) // until srt is gone
	reg := &placeholders.Registry{Dir: args[0], TmpDir: args[2]}
	reg.WaitEnded(args[1]) // the kernel drops srt's lock a moment later
	return reg.Sweep()
}

// closeInherited marks every descriptor above 2 close-on-exec, so that
// what srt or bubblewrap inherited (a file the settings hide, a socket)
// never reaches the command: Go and bubblewrap close only what they
// opened themselves. It fails, and the command does not run, when the
// descriptors cannot be listed.
func closeInherited() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing inherited descriptors: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}

// quarantineWritten moves the protected names the command wrote into the
// store and says so on the command's standard error, loudly: they would
// otherwise run on the host (a git hook, a shell start-up file).
func quarantineWritten(store *quarantine.Store, spec quarantine.Spec, o Options) []quarantine.Item {
	found, notes := quarantine.Check(spec)
	for _, n := range notes {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", n)
	}
	items, err := store.Move(found)
	if len(items) > 0 {
		fmt.Fprintf(o.Stderr, "srt: the sandboxed command wrote protected names, which could run commands on this host; they were moved to %s:\n", store.Dir)
		for _, it := range items {
			fmt.Fprintf(o.Stderr, "srt:   %s (%s): srt quarantine release %s\n", it.Path, it.Why, it.ID)
		}
		fmt.Fprintf(o.Stderr, "srt: review them with \"srt quarantine list\"; put one back with \"srt quarantine release ID\", delete it with \"srt quarantine drop ID\".\n")
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "srt: WARNING: protected names written in the sandbox could not be moved to the quarantine; remove them before running git or a shell there: %v\n", err)
	}
	return items
}
