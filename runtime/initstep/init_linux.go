//go:build linux

package initstep

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Main runs the role args[0] names, InitArg or LimitArg, and returns the
// exit status when the role fails (each returns only on failure).
func Main(args []string) int {
	if len(args) == 0 || args[0] != InitArg && args[0] != LimitArg {
		fmt.Fprintf(os.Stderr, "%s is srt's init step inside each sandbox: srt runs it (%s ARGS, or %s ARGS)\n", Binary, InitArg, LimitArg)
		return 2
	}
	if args[0] == InitArg {
		err := Init(args[1:])
		fmt.Fprintf(os.Stderr, "srt: sandbox init: %v\n", err)
		return ExitCannotRun
	}
	err := LimitExec(args[1:])
	fmt.Fprintf(os.Stderr, "srt: %v\n", err)
	return 1
}

// Init is the init step: it runs as the first process in the sandbox
// (PID 1; argv: InitArg [--tty=FDS] [--landlock=SCOPES
// [--landlock-write=PATH]...] [--rlimit=NAME=SOFT:HARD]...
// [--watch-writes] -- command...),
// under the seccomp program already. It opens the proxy listeners in the
// sandbox's network namespace and, with --tty, a pseudo-terminal for the
// standard descriptors FDS; hands them (the terminal's master side) to the
// host process; closes everything the command must not inherit; runs the
// command as its child, in a process group of its own (a session of its
// own, on the terminal, with --tty), restricted by the second layer with
// --landlock (landlock_linux.go), with the rlimits of --rlimit (through
// LimitExec); forwards signals to that group; and exits with the
// command's status. It returns only on failure.
func Init(args []string) error {
	// Nothing the sandbox's processes can reach: what srt or bubblewrap
	// inherited is closed, and this process is not dumpable, so the
	// command (same user) cannot open its descriptors through
	// /proc/1/fd, copy them with pidfd_getfd, or read or trace it
	// (ptrace, process_vm_readv, /proc/1/mem): each asks the kernel's
	// ptrace access check, which refuses a process that is not dumpable
	// to a caller without CAP_SYS_PTRACE.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("making the init step undumpable: %w", err)
	}
	if err := closeLeaked(); err != nil {
		return err
	}
	// One thread from here on: the host lists the threads of this process
	// once it has the hand-off, and reads the kernel's audit for the
	// domain one of them makes (runtime/sandbox: landlock_audit_linux.go).
	runtime.LockOSThread()
	// PID 1 ignores signals it has no handler for, so the command runs as
	// its child; signals are caught from the start and delivered once it
	// runs.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	opts, args, err := ParseArgs(args)
	if err != nil {
		return err
	}
	var fds []int
	for _, port := range []int{HTTPPort, SOCKSPort} {
		fd, err := listen(port)
		if err != nil {
			return fmt.Errorf("listening on 127.0.0.1:%d: %w", port, err)
		}
		fds = append(fds, fd)
	}
	var master, slave *os.File
	if opts.TTYFDs != nil {
		var err error
		if master, slave, err = openInnerTerminal(); err != nil {
			return err
		}
		fds = append(fds, int(master.Fd()))
	}
	sent := fds
	watch := -1
	if opts.WatchWrites {
		// On this thread, which starts the command, from here on: the
		// terminal above is opened for writing before it.
		if watch, err = InstallWatch(); err != nil {
			return err
		}
		sent = append(slices.Clip(fds), watch)
	}
	if err := unix.Sendmsg(FDHandoff, []byte{1}, unix.UnixRights(sent...), nil, 0); err != nil {
		return fmt.Errorf("handing the listeners over: %w", err)
	}
	if watch >= 0 {
		unix.Close(watch)
	}
	// The second layer's ruleset is built while the host records the
	// write roots; it is enforced once the command may start.
	var rules *Ruleset
	if opts.Landlock != nil {
		var err error
		if rules, err = opts.Landlock.Build(ABI()); err != nil {
			return err
		}
	}
	// Go checks once, the first time it starts a process, whether this
	// kernel's process descriptors work (a process started and waited
	// for): done here, while the host is busy, it is off the command's
	// way.
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Release()
	}
	// The host says when the command may start: once it has recorded
	// what the write roots hold (the check after the run compares with
	// it) and set up the terminal (modes, window size). Without that
	// byte, the command does not start.
	// The byte may come with the token the second layer's domain is to
	// be made with (see Ruleset.Enforce).
	token, env, err := readStart(opts.CommandLater, &args)
	if err != nil {
		return err
	}
	if master != nil {
		fds = fds[:2] // the master stays open here: its foreground job is read from it
	}
	// The limits are the command's alone (see LimitArg): the init step
	// keeps its program open to start the command through it.
	closeFDs := append(fds, FDHandoff, FDSeccomp, FDInfo)
	if opts.Rlimits == nil {
		closeFDs = append(closeFDs, FDSelf)
	}
	for _, fd := range closeFDs {
		unix.Close(fd)
	}
	if err := closeInherited(); err != nil { // FDSelf too: close-on-exec
		return err
	}
	if opts.Rlimits != nil {
		pre := []string{"/proc/self/fd/" + strconv.Itoa(FDSelf), LimitArg}
		args = append(append(append(pre, opts.Rlimits...), "--"), args...)
	}
	if rules != nil {
		// From here on this goroutine stays on a thread restricted by the
		// second layer, and starts the command from it.
		if err := rules.Enforce(token); err != nil {
			return err
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env // nil: this process's, bubblewrap's
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if slave != nil {
		std := []*os.File{os.Stdin, os.Stdout, os.Stderr}
		for _, fd := range opts.TTYFDs {
			std[fd] = slave
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = std[0], std[1], std[2]
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: opts.TTYFDs[0]}
	}
	if err := cmd.Start(); err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "srt: %v\n", err)
			os.Exit(ExitNotFound)
		}
		return err
	}
	if slave != nil {
		slave.Close()
	}
	// The signals stay caught until the exit: one that comes after the
	// command has ended must not end this process with another status.
	done, forwarded := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(forwarded)
		forwardSignals(sigs, done, cmd.Process.Pid, master)
	}()
	cmd.Wait()
	close(done)
	<-forwarded
	os.Exit(ExitCode(cmd.ProcessState))
	return nil
}

// readStart waits for the host's start message (see CommandHeader) and
// returns the token of the second layer's domain. With later, the
// message carries the command: it replaces *args, its environment is
// returned, and its standard descriptors become this process's 0, 1 and
// 2, which the command inherits.
func readStart(later bool, args *[]string) (token string, env []string, err error) {
	if !later {
		start := make([]byte, 32)
		n, err := unix.Read(FDHandoff, start)
		if n < 1 || start[0] != StartByte {
			return "", nil, fmt.Errorf("the host did not let the command start: %v", err)
		}
		return string(start[1:n]), nil, nil
	}
	head := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := unix.Recvmsg(FDHandoff, head, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil || n < 1 {
		return "", nil, fmt.Errorf("the host did not let the command start: %v", err)
	}
	var stdio []int
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		stdio, _ = unix.ParseUnixRights(&msgs[0])
	}
	defer func() {
		for _, fd := range stdio {
			unix.Close(fd)
		}
	}()
	length, token, err := ParseCommandHeader(head[:n])
	if err != nil {
		return "", nil, err
	}
	if len(stdio) != 3 {
		return "", nil, fmt.Errorf("bad start message: %d standard descriptors, want 3", len(stdio))
	}
	b := make([]byte, 0, length)
	buf := make([]byte, 64<<10)
	for len(b) < length {
		n, err := unix.Read(FDHandoff, buf)
		if n <= 0 {
			return "", nil, fmt.Errorf("the host's start message ended after %d of %d bytes: %v", len(b), length, err)
		}
		b = append(b, buf[:n]...)
	}
	argv, env, err := DecodeCommand(b[:length])
	if err != nil {
		return "", nil, err
	}
	for i, fd := range stdio {
		if err := unix.Dup3(fd, i, 0); err != nil {
			return "", nil, fmt.Errorf("taking the command's standard descriptor %d: %w", i, err)
		}
	}
	*args = argv
	return token, env, nil
}

// listen opens a listening TCP socket on 127.0.0.1:port (as Go's net
// package would: close-on-exec, SO_REUSEADDR, the largest backlog the
// kernel takes), without linking the net package.
func listen(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	}
	if err == nil {
		err = unix.Listen(fd, unix.SOMAXCONN)
	}
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// Options are the init step's options (see Init).
type Options struct {
	TTYFDs   []int         // --tty: the descriptors that become the terminal
	Landlock *LandlockSpec // --landlock, --landlock-write: the second layer
	Rlimits  []string      // --rlimit: NAME=SOFT:HARD, for LimitExec
	// WatchWrites (--watch-writes) has the command's writes watched.
	WatchWrites bool
	// CommandLater (--command-later): the command comes in the start
	// message, with its environment and standard descriptors.
	CommandLater bool
}

// ParseArgs reads the init step's options off args, up to "--" or the
// first word that is none, and returns them with the command.
func ParseArgs(args []string) (Options, []string, error) {
	var o Options
	for len(args) > 0 && args[0] != "--" && strings.HasPrefix(args[0], "--") {
		a := args[0]
		args = args[1:]
		if ok, err := parseLandlockArg(a, &o.Landlock); ok {
			if err != nil {
				return o, nil, err
			}
			continue
		}
		if v, ok := strings.CutPrefix(a, RlimitArg); ok {
			o.Rlimits = append(o.Rlimits, v)
			continue
		}
		if a == WatchArg {
			o.WatchWrites = true
			continue
		}
		if a == CommandArg {
			o.CommandLater = true
			continue
		}
		if !strings.HasPrefix(a, TTYArg) {
			return o, nil, fmt.Errorf("unknown option %q of the init step", a)
		}
		var err error
		if o.TTYFDs, err = ParseTTYArg(strings.TrimPrefix(a, TTYArg)); err != nil {
			return o, nil, err
		}
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	switch {
	case o.CommandLater && len(args) > 0:
		return o, nil, fmt.Errorf("%s and a command %q: the command comes in the start message", CommandArg, args)
	case !o.CommandLater && len(args) == 0:
		return o, nil, errors.New("no command")
	}
	return o, args, nil
}

// ParseTTYArg reads the value of --tty=.
func ParseTTYArg(v string) ([]int, error) {
	var fds []int
	for _, s := range strings.Split(v, ",") {
		fd, err := strconv.Atoi(s)
		if err != nil || fd < 0 || fd > 2 {
			return nil, fmt.Errorf("bad %s%s", TTYArg, v)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// openInnerTerminal opens a new pseudo-terminal of the sandbox's own
// devpts instance: its master and the command's end.
func openInnerTerminal() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening the sandbox's terminal (/dev/ptmx): %w", err)
	}
	master = os.NewFile(uintptr(m), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlocking the sandbox's terminal: %w", err)
	}
	// TIOCGPTPEER opens the peer without a path lookup; before Linux 4.13,
	// the name from TIOCGPTN.
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, uintptr(unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC))
	if errno != 0 {
		n, err := unix.IoctlGetUint32(m, unix.TIOCGPTN)
		if err != nil {
			master.Close()
			return nil, nil, fmt.Errorf("naming the sandbox's terminal: %w", err)
		}
		f, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			master.Close()
			return nil, nil, err
		}
		return master, f, nil
	}
	return master, os.NewFile(s, "/dev/pts"), nil
}

// forwardSignals delivers each signal to the command's process group (a
// shell and the program it waits for both see ^C, as on a terminal) and,
// on a terminal, to its foreground job when that is another group (the
// job an interactive shell runs), until done is closed.
func forwardSignals(sigs <-chan os.Signal, done <-chan struct{}, pgid int, master *os.File) {
	for {
		var s os.Signal
		select {
		case s = <-sigs:
		case <-done:
			return
		}
		sig := s.(syscall.Signal)
		unix.Kill(-pgid, sig)
		if master != nil {
			if fg, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP); err == nil && fg > 1 && fg != pgid {
				unix.Kill(-fg, sig)
			}
		}
	}
}

// closeLeaked closes every descriptor the init step inherited but its
// own (FDHandoff, FDSelf, FDInfo, FDSeccomp) and the standard ones: a
// descriptor srt's caller left open (a log, a jobserver pipe, a file
// the settings hide) reaches no process of the sandbox. It runs first,
// on system calls alone, before the init step opens anything; the Go
// runtime's own poller (an eventpoll and an eventfd, made when a
// standard descriptor is non-blocking) is left, and reaches no file.
// It fails, and the command does not run, when the descriptors cannot
// be listed or one cannot be closed.
func closeLeaked() error {
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("listing inherited descriptors: %w", err)
	}
	var fds []int
	buf := make([]byte, 4096)
	for {
		n, err := unix.Getdents(dir, buf)
		if err != nil {
			unix.Close(dir)
			return fmt.Errorf("listing inherited descriptors: %w", err)
		}
		if n <= 0 {
			break
		}
		var names []string
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		for _, name := range names {
			if fd, err := strconv.Atoi(name); err == nil && fd > 2 && fd != dir {
				fds = append(fds, fd)
			}
		}
	}
	unix.Close(dir)
	for _, fd := range fds {
		switch fd {
		case FDSeccomp, FDHandoff, FDSelf, FDInfo:
			continue
		}
		link := make([]byte, 64)
		n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), link)
		if err == nil {
			switch string(link[:n]) {
			case "anon_inode:[eventpoll]", "anon_inode:[eventfd]":
				continue // the Go runtime's poller
			}
		}
		if err := unix.Close(fd); err != nil && err != unix.EBADF {
			return fmt.Errorf("closing inherited descriptor %d: %w", fd, err)
		}
	}
	return nil
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

// rlimitNames are the init step's names of the rlimits.
var rlimitNames = map[string]int{"data": unix.RLIMIT_DATA, "nproc": unix.RLIMIT_NPROC, "cpu": unix.RLIMIT_CPU, "nofile": unix.RLIMIT_NOFILE}

// applyRlimit sets the rlimit of one --rlimit= option on this process
// (syscall.Setrlimit: the command gets it, not Go's raised default).
func applyRlimit(v string) error {
	name, val, _ := strings.Cut(v, "=")
	soft, hard, _ := strings.Cut(val, ":")
	res, ok := rlimitNames[name]
	s, err1 := strconv.ParseUint(soft, 10, 64)
	h, err2 := strconv.ParseUint(hard, 10, 64)
	if !ok || err1 != nil || err2 != nil || s > h {
		return fmt.Errorf("bad %s%s", RlimitArg, v)
	}
	if err := syscall.Setrlimit(res, &syscall.Rlimit{Cur: s, Max: h}); err != nil {
		return fmt.Errorf("setting the %s limit to %s: %w", name, val, err)
	}
	return nil
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
		os.Exit(ExitNotFound)
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "srt: %s: %v\n", argv[0], err)
	os.Exit(ExitCannotRun)
	return err
}
