//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/private"
	"srt.dev/runtime/quarantine"
)

// Descriptors the init role inherits.
const (
	fdSeccomp = 3 // read by bubblewrap, not by the init
	fdHandoff = 4 // one end of the socket pair to the host process
	fdSelf    = 5 // this binary, opened for exec
	fdInfo    = 6 // bubblewrap writes {"child-pid": N} here
)

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
// hand-off socket), fd 5 (this binary) and fd 6 (bubblewrap's --info-fd).
// closeAll closes what the set holds; on failure nothing is left open.
func childFiles(prog []byte, self string) (_ *childFileSet, _ func(), err error) {
	set := &childFileSet{}
	closeAll := func() {
		for _, f := range append(set.child, set.hostEnd, set.info) {
			if f != nil {
				f.Close()
			}
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	// The seccomp program through a pipe (bwrap reads it to EOF).
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	set.child = append(set.child, r)
	go func() { w.Write(prog); w.Close() }()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	set.hostEnd = os.NewFile(uintptr(pair[0]), "srt-handoff-host")
	set.child = append(set.child, os.NewFile(uintptr(pair[1]), "srt-handoff-child"))
	exe, err := os.Open(self)
	if err != nil {
		return nil, nil, err
	}
	set.child = append(set.child, exe)
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	set.info = infoR
	set.child = append(set.child, infoW)
	set.extra = append([]*os.File(nil), set.child...)
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
// (PID 1; argv: InitArg [--tty=FDS] [--landlock=SCOPES
// [--landlock-write=PATH]...] [--rlimit=NAME=SOFT:HARD]... -- command...),
// under the seccomp
// program already. It opens the proxy listeners in the sandbox's network
// namespace and, with --tty, a pseudo-terminal for the standard
// descriptors FDS; hands them (the terminal's master side) to the host
// process; closes everything the command must not inherit; runs the
// command as its child, in a process group of its own (a session of its
// own, on the terminal, with --tty), restricted by the second layer with
// --landlock (landlock_linux.go), with the rlimits of --rlimit
// (limits_linux.go); forwards signals to that group; and
// exits with the command's status. It returns only on failure.
func Init(args []string) error {
	// One thread from here on: the host lists the threads of this process
	// once it has the hand-off, and reads the kernel's audit for the
	// domain one of them makes (landlock_audit_linux.go).
	runtime.LockOSThread()
	// PID 1 ignores signals it has no handler for, so the command runs as
	// its child; signals are caught from the start and delivered once it
	// runs.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	opts, args, err := parseInitArgs(args)
	if err != nil {
		return err
	}
	ttyFDs, ll, rlimits := opts.ttyFDs, opts.ll, opts.rlimits
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
	// The second layer's ruleset is built while the host records the
	// write roots; it is enforced once the command may start.
	var rules *landlockRuleset
	if ll != nil {
		var err error
		if rules, err = ll.build(landlockABI()); err != nil {
			return err
		}
	}
	// The host says when the command may start: once it has recorded
	// what the write roots hold (the check after the run compares with
	// it) and set up the terminal (modes, window size). Without that
	// byte, the command does not start.
	// The byte may come with the token the second layer's domain is to
	// be made with (see landlockRuleset.enforce).
	start := make([]byte, 32)
	n, err := unix.Read(fdHandoff, start)
	if n < 1 {
		return fmt.Errorf("the host did not let the command start: %v", err)
	}
	token := string(start[1:n])
	if master != nil {
		fds = fds[:2] // the master stays open here: its foreground job is read from it
	}
	// The limits are the command's alone (see LimitArg): the init step
	// keeps this binary open to start the command through it.
	closeFDs := append(fds, fdHandoff, fdSeccomp, fdInfo)
	if rlimits == nil {
		closeFDs = append(closeFDs, fdSelf)
	}
	for _, fd := range closeFDs {
		unix.Close(fd)
	}
	if err := closeInherited(); err != nil { // fdSelf too: close-on-exec
		return err
	}
	if rlimits != nil {
		pre := []string{"/proc/self/fd/" + strconv.Itoa(fdSelf), LimitArg}
		args = append(append(append(pre, rlimits...), "--"), args...)
	}
	if rules != nil {
		// From here on this goroutine stays on a thread restricted by the
		// second layer, and starts the command from it.
		if err := rules.enforce(token); err != nil {
			return err
		}
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

// initOptions are the init step's options (see Init).
type initOptions struct {
	ttyFDs  []int         // --tty: the descriptors that become the terminal
	ll      *landlockSpec // --landlock, --landlock-write: the second layer
	rlimits []string      // --rlimit: NAME=SOFT:HARD, for LimitExec
}

// parseInitArgs reads the init step's options off args, up to "--" or
// the first word that is none, and returns them with the command.
func parseInitArgs(args []string) (initOptions, []string, error) {
	var o initOptions
	for len(args) > 0 && args[0] != "--" && strings.HasPrefix(args[0], "--") {
		a := args[0]
		args = args[1:]
		if ok, err := parseLandlockArg(a, &o.ll); ok {
			if err != nil {
				return o, nil, err
			}
			continue
		}
		if v, ok := strings.CutPrefix(a, rlimitArg); ok {
			o.rlimits = append(o.rlimits, v)
			continue
		}
		if !strings.HasPrefix(a, ttyArg) {
			return o, nil, fmt.Errorf("unknown option %q of the init step", a)
		}
		var err error
		if o.ttyFDs, err = parseTTYArg(strings.TrimPrefix(a, ttyArg)); err != nil {
			return o, nil, err
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return o, nil, errors.New("no command")
	}
	return o, args, nil
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
		private.RemoveAll(dir) // what the command wrote: read-only modules too
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
func startReaperAsync(self string, reg *placeholders.Registry, record string, out chan<- func(bool), debug func(string)) {
	stop, err := startReaper(self, reg, record)
	if err != nil {
		debug("no reaper: " + err.Error())
		stop = func(bool) {}
	}
	out <- stop
}

// startReaper starts the reaper in a session of its own; stop lets it go
// once the run has cleaned up after itself: with clean, the reaper ends
// without sweeping; without (or when srt dies first, and the pipe closes
// without a word), it sweeps.
func startReaper(self string, reg *placeholders.Registry, record string) (stop func(clean bool), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A shell waits (it starts in a fraction of the time srt does); srt is
	// run only when there is something to do. Only srt holds the pipe's
	// other end (close-on-exec): no process of the sandbox can say "clean".
	cmd := exec.Command("/bin/sh", "-c", `while read -r l; do [ "$l" = clean ] && exit 0; done; exec "$0" `+ReapArg+` "$1" "$2" "$3"`, self, reg.Dir, record, reg.TmpDir)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	r.Close()
	go cmd.Wait()
	return func(clean bool) {
		if clean {
			w.Write([]byte("clean\n"))
		}
		w.Close()
	}, nil
}

// startChecker starts a reaper that sweeps the registry now, doing the
// checks killed runs owe (see Registry.Sweep), in a session of its own.
func startChecker(self string, reg *placeholders.Registry, debug func(string)) {
	cmd := exec.Command(self, ReapArg, reg.Dir, "", reg.TmpDir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		debug("no checker: " + err.Error())
		return
	}
	go cmd.Wait()
}

// Reap is the reaper (see ReapArg).
func Reap(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: srt " + ReapArg + " DIR RECORD TMPDIR")
	}
	io.Copy(io.Discard, os.Stdin) // until srt is gone
	reg := &placeholders.Registry{Dir: args[0], TmpDir: args[2]}
	reg.WaitEnded(args[1]) // the kernel drops srt's lock a moment later
	_, err := reg.Sweep(true)
	return err
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
func quarantineWritten(store *quarantine.Store, spec quarantine.Spec, start *quarantine.Snapshot, o Options) []quarantine.Item {
	found, _, notes := quarantine.Check(spec, start)
	for _, n := range notes {
		fmt.Fprintf(o.Stderr, "srt: warning: %s\n", n)
	}
	items, err := store.Move(found)
	if len(items) > 0 {
		fmt.Fprintf(o.Stderr, "srt: the sandboxed command wrote protected names, which could run commands on this host; they were moved to %q:\n", store.Dir)
		for _, it := range items {
			where := ""
			if it.InPlace != "" {
				where = fmt.Sprintf(", renamed in place to %q (a directory cannot leave its file system)", it.InPlace)
			}
			fmt.Fprintf(o.Stderr, "srt:   %q (%s%s): srt quarantine release %s\n", it.Path, it.Why, where, it.ID)
		}
		fmt.Fprintf(o.Stderr, "srt: review them with \"srt quarantine list\"; put one back with \"srt quarantine release ID\", delete it with \"srt quarantine drop ID\".\n")
	}
	if err != nil {
		fmt.Fprintf(o.Stderr, "srt: WARNING: protected names written in the sandbox could not be moved to the quarantine; remove them before running git or a shell there: %v\n", err)
	}
	return items
}

// LimitExec is the trampoline (see LimitArg); it returns only on failure.
func LimitExec(args []string) error {
	i := slices.Index(args, "--")
	if i < 1 || i == len(args)-1 {
		return errors.New("usage: srt " + LimitArg + " NAME=SOFT:HARD -- COMMAND (one or more of each)")
	}
	for _, v := range args[:i] {
		if err := applyRlimit(v); err != nil {
			return err
		}
	}
	argv := args[i+1:]
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "srt: %v\n", err)
		os.Exit(127)
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "srt: %s: %v\n", argv[0], err)
	os.Exit(126)
	return err
}
