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
	goruntime "runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/resolve"
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
	// From here on, SIGINT, SIGTERM and SIGHUP are for the command: they
	// are forwarded to it once it runs, never left to kill srt.
	sigs := make(chan os.Signal, 8)
	if o.ForwardSignals {
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
		defer signal.Stop(sigs)
	}
	_, text, key := o.attribution(argv)
	token, err := randomHex(16) // this run's proxy password
	if err != nil {
		return nil, err
	}
	arch, ok := seccomp.ForGOARCH(goruntime.GOARCH)
	if !ok && len(p.Process.Seccomp) > 0 {
		return nil, fmt.Errorf("no seccomp program for %s: refusing to run without one", goruntime.GOARCH)
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
	// srt's own state is read-only in the sandbox (a command that could
	// rewrite the policy cache or the placeholder registry could weaken
	// or disturb a later run).
	protect := append(append([]string(nil), o.Protect...), reg.Dir)
	plan := bwrap.Emit(protected(p, protect))
	host := resolve.Host{
		Home: o.Home, Cwd: o.Cwd, EmptyDir: empty, SeccompFD: fdSeccomp,
		ProxyEnv:  proxyEnv(token, key, self, HTTPPort, SOCKSPort),
		MaskValue: func(string) string { v, _ := randomHex(16); return "fake_value_" + v },
	}
	if n, err := strconv.Atoi(envValue(o.Env, "GIT_CONFIG_COUNT")); err == nil {
		host.GitConfigCount = n
	}
	res, err := resolve.Resolve(plan.Steps, host)
	if err != nil {
		os.Remove(empty)
		return nil, err
	}
	for _, n := range res.Notes {
		o.debug("resolve: " + n)
	}
	if p.Filesystem.Disabled {
		// Everything is writable: srt's state is bound read-only over it.
		for _, d := range protect {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				res.Args = append(res.Args, "--ro-bind", d, d)
			}
		}
	}
	full := append([]string{o.Bwrap}, res.Args...)
	full = append(full, "--chdir", o.Cwd, "--as-pid-1", "--info-fd", strconv.Itoa(fdInfo),
		"--", "/proc/self/fd/"+strconv.Itoa(fdSelf), InitArg, "--")
	full = append(full, argv...)
	out := &Result{Argv: full}
	if o.DryRun {
		os.Remove(empty)
		return out, nil
	}

	scratch := []string{empty}
	if len(res.Placeholders) == 0 {
		// Nothing to clean up after this run: no record to sweep, no
		// reaper to start.
		os.Remove(empty)
		scratch = nil
	}
	run, err := reg.Register(res.Placeholders, scratch...)
	if err != nil {
		return nil, err
	}
	defer run.Release()
	// A watcher outside the sandbox sweeps the registry when srt is gone,
	// however it goes (SIGKILL included): it waits for the end of a pipe
	// only srt holds open, then for this run's lock.
	// It starts alongside bubblewrap, off the critical path; until it runs,
	// the sweep at the next start is the fallback.
	reaper := make(chan func(), 1)
	if scratch == nil {
		reaper <- func() {}
	} else {
		go startReaperAsync(self, reg.Dir, run.Record(), reaper, o.debug)
	}
	defer func() { (<-reaper)() }()

	files, closeAll, err := childFiles(p, arch, self)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	hostEnd := files.hostEnd

	cmd := exec.Command(o.Bwrap, full[1:]...)
	cmd.Env = o.Env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	cmd.ExtraFiles = files.extra
	// bubblewrap dies with srt (Pdeathsig), and lives in its own process
	// group, so that a terminal's ^C reaches srt, which forwards it to the
	// command, rather than killing bubblewrap and the sandbox with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
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
	listeners, herr := receiveListeners(hostEnd)
	if herr == nil {
		go (&proxy.HTTP{Egress: egress}).Serve(listeners[0])
		go (&proxy.SOCKS{Egress: egress}).Serve(listeners[1])
		defer listeners[0].Close()
		defer listeners[1].Close()
	}
	if o.Started != nil {
		o.Started()
	}

	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	pid := 0
	var pending []os.Signal // arrived before the init step's PID was known
	var kill <-chan time.Time
	cancelled := ctx.Done()
wait:
	for {
		select {
		case pid = <-initPID:
			if pid <= 0 {
				// bubblewrap ended without naming its child: there is no
				// one to signal (kill(0) would signal srt's own group).
				pid = 0
				continue
			}
			for _, s := range pending {
				syscall.Kill(pid, s.(syscall.Signal))
			}
			pending = nil
		case <-cancelled:
			// Ask the command to stop; the init step forwards SIGTERM.
			cancelled = nil
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGTERM)
			} else {
				pending = append(pending, syscall.SIGTERM)
			}
			kill = time.After(2 * time.Second)
		case <-kill:
			cmd.Process.Kill() // bubblewrap; the sandbox dies with it
			if pid > 0 {
				syscall.Kill(pid, syscall.SIGKILL) // PID 1 of its namespace: all of it
			}
		case s := <-sigs:
			if pid > 0 {
				syscall.Kill(pid, s.(syscall.Signal))
			} else {
				pending = append(pending, s)
			}
		case werr = <-done:
			break wait
		}
	}
	// The listeners close on return; decisions still in flight are
	// recorded, but the result holds those made while the command ran.
	out.Violations = rec.entries()
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

// childFiles prepares fd 3 (the seccomp program), fd 4 (the hand-off
// socket) and fd 5 (this binary).
func childFiles(p *policy.Policy, arch seccomp.Arch, self string) (*childFileSet, func(), error) {
	set := &childFileSet{}
	closeAll := func() {
		for _, f := range append(set.child, set.hostEnd, set.info) {
			if f != nil {
				f.Close()
			}
		}
	}
	// The seccomp program through a pipe (bwrap reads it to EOF).
	var prog []byte
	rules, err := seccomp.ParseRules(p.Process.Seccomp)
	if err != nil {
		return nil, closeAll, err
	}
	if rules != (seccomp.Rules{}) {
		if prog, err = seccomp.Build(arch, rules).Marshal(); err != nil {
			return nil, closeAll, err
		}
	}
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

// receiveListeners waits for the init role's two listening sockets.
func receiveListeners(f *os.File) ([]net.Listener, error) {
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(2*4))
	// Close-on-exec from the start: a bubblewrap another run starts
	// meanwhile must not inherit this sandbox's listeners.
	n, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if n == 0 && oobn == 0 {
		return nil, errors.New("the init step ended without handing over")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, fmt.Errorf("bad hand-off message: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 2 {
		return nil, fmt.Errorf("bad hand-off rights: %v", err)
	}
	var out []net.Listener
	for i, fd := range fds {
		lf := os.NewFile(uintptr(fd), "listener-"+strconv.Itoa(i))
		l, err := net.FileListener(lf)
		lf.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// Init is the init role: it runs as the first process in the sandbox
// (PID 1; argv: InitArg -- command...), under the seccomp program already.
// It opens the proxy listeners in the sandbox's network namespace, hands
// them to the host process, closes everything the command must not
// inherit, runs the command as its child, forwards signals to it, and
// exits with its status. It returns only on failure.
func Init(args []string) error {
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
	if err := unix.Sendmsg(fdHandoff, []byte{1}, unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("handing the listeners over: %w", err)
	}
	for _, fd := range append(fds, fdHandoff, fdSelf, fdSeccomp, fdInfo) {
		unix.Close(fd)
	}
	if err := closeInherited(); err != nil {
		return err
	}
	// PID 1 ignores signals it has no handler for, so the command runs as
	// its child; this process forwards signals and ends with its status.
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "srt: %v\n", err)
			os.Exit(127)
		}
		return err
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	cmd.Wait()
	os.Exit(exitCode(cmd.ProcessState))
	return nil
}

// startReaperAsync starts the reaper and sends its stop function.
func startReaperAsync(self, dir, record string, out chan<- func(), debug func(string)) {
	stop, err := startReaper(self, dir, record)
	if err != nil {
		debug("no reaper: " + err.Error())
		stop = func() {}
	}
	out <- stop
}

// startReaper starts the reaper in a session of its own; stop lets it go
// once the run has cleaned up after itself.
func startReaper(self, dir, record string) (stop func(), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A shell waits (it starts in a fraction of the time srt does); srt is
	// run only when there is something to do.
	cmd := exec.Command("/bin/sh", "-c", `while read -r _; do :; done; exec "$0" `+ReapArg+` "$1" "$2"`, self, dir, record)
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
	if len(args) != 2 {
		return errors.New("usage: srt " + ReapArg + " DIR RECORD")
	}
	io.Copy(io.Discard, os.Stdin) // until srt is gone
	reg := &placeholders.Registry{Dir: args[0]}
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
