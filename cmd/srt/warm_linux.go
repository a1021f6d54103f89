//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/private"
	"srt.dev/runtime/sandbox"
)

// warmClient hands the command of srt (c, o) to the warm server, when
// SRT_WARM is on and the command can run there: served says whether it
// did, and code is then the command's status. Without a server, it
// starts one for the next command and leaves this one to the caller.
func warmClient(c *command, o *options, stdin io.Reader, stdout, stderr io.Writer) (code int, served bool, err error) {
	on, err := warmOn()
	if err != nil || !on {
		return 0, false, err
	}
	debug := func(msg string) {}
	if o.debug {
		log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		debug = func(msg string) { log.Debug("warm start: " + msg) }
	}
	files, why := warmFiles(c, o, stdin, stdout, stderr)
	if why != "" {
		debug("this command runs here: " + why)
		return 0, false, nil
	}
	sock, err := warmSocket(o.settings)
	if err != nil {
		debug("this command runs here: " + err.Error())
		return 0, false, nil
	}
	conn, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		// None yet: one starts, and serves this command too.
		if err := startWarmServer(sock, o.args); err != nil {
			debug("this command runs here: no warm server, and none could be started: " + err.Error())
			return 0, false, nil
		}
		if conn, err = net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: sock, Net: "unixpacket"}); err != nil {
			debug("this command runs here: the warm server started, but does not answer: " + err.Error())
			return 0, false, nil
		}
	}
	defer conn.Close()
	if err := samePeer(conn); err != nil {
		debug("this command runs here: " + err.Error())
		return 0, false, nil
	}
	cwd, _ := os.Getwd()
	req, err := json.Marshal(warmRequest{Args: o.args, Cwd: cwd, Env: os.Environ()})
	if err != nil {
		return 0, false, err
	}
	fds := []int{int(files[0].Fd()), int(files[1].Fd()), int(files[2].Fd())}
	if _, _, err := conn.WriteMsgUnix(req, unix.UnixRights(fds...), nil); err != nil {
		debug("this command runs here: the warm server did not take it: " + err.Error())
		return 0, false, nil
	}
	// The server runs the command from here on: signals are relayed to
	// it, and the client ends with the command.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	defer signal.Stop(sigs)
	replies := make(chan warmReply, 1)
	go func() {
		defer close(replies)
		buf := make([]byte, 4096)
		n, err := conn.Read(buf)
		if err != nil {
			return
		}
		var r warmReply
		if json.Unmarshal(buf[:n], &r) == nil {
			replies <- r
		}
	}()
	for {
		select {
		case s := <-sigs:
			b, _ := json.Marshal(warmSignal{Signal: int(s.(syscall.Signal))})
			conn.Write(b)
		case r, ok := <-replies:
			switch {
			case !ok:
				return 0, true, errors.New("the warm server ended before the command did: its status is not known (SRT_WARM=off runs commands without it)")
			case r.Cold != "":
				debug("this command runs here: " + r.Cold)
				return 0, false, nil
			case r.Code == nil:
				return 0, true, errors.New("the warm server sent no status")
			}
			debug("the warm server ran the command")
			return *r.Code, true, nil
		}
	}
}

// warmFiles are the command's standard descriptors, when the warm server
// can take them: files, none of them a terminal (a command on a terminal
// gets one of its own, which the server cannot attach yet).
func warmFiles(c *command, o *options, stdin io.Reader, stdout, stderr io.Writer) ([3]*os.File, string) {
	var files [3]*os.File
	switch {
	case c.name != "":
		return files, "srt run --plan runs its plan itself"
	case o.dryRun:
		return files, "a dry run"
	case o.controlFD != 0:
		return files, "--control-fd is read by this process"
	}
	for i, v := range []any{stdin, stdout, stderr} {
		f, ok := v.(*os.File)
		if !ok {
			return files, "a standard stream that is not a file"
		}
		if _, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			return files, "a terminal"
		}
		files[i] = f
	}
	return files, ""
}

// warmSocket is the socket of the warm server for this command: in the
// runs' temporary directory, which every sandbox sees empty.
func warmSocket(settings string) (string, error) {
	reg, err := placeholders.Default()
	if err != nil {
		return "", err
	}
	// Made before any sandbox of this user starts with a server's socket
	// in it (a sandbox hides it only when it exists as it starts).
	if err := private.Dir(reg.TmpDir); err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if settings != "" {
		if settings, err = filepath.Abs(settings); err != nil {
			return "", err
		}
	}
	key, err := warmKey(self, cwd, os.Environ(), settings)
	if err != nil {
		return "", err
	}
	sock := filepath.Join(reg.TmpDir, "warm-"+key)
	if len(sock) >= len(unix.RawSockaddrUnix{}.Path) {
		return "", fmt.Errorf("the warm server's socket %s is a longer path than a socket may have", sock)
	}
	return sock, nil
}

// startWarmServer starts the warm server in a session of its own, with
// this process's working directory and environment, lets it go, and
// returns once it listens (or another server of the same socket does).
func startWarmServer(sock string, args []string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	cmd := exec.Command(self, append([]string{warmArg, sock, "--"}, args...)...)
	cmd.ExtraFiles = []*os.File{w} // warmReadyFD: the server says it listens
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return err
	}
	cmd.Process.Release()
	r.SetReadDeadline(time.Now().Add(warmStart))
	b := make([]byte, 16)
	n, err := r.Read(b)
	if n == 0 {
		return fmt.Errorf("it did not say it listens within %v: %v", warmStart, err)
	}
	return nil
}

// samePeer refuses a peer that is not a process of this user in this
// process's user and PID namespaces: a sandbox's process runs in
// namespaces of its own.
func samePeer(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not %d", cred.Uid, os.Getuid())
	}
	for _, ns := range []string{"user", "pid"} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", cred.Pid, ns))
		if err1 != nil || err2 != nil || mine != theirs {
			return fmt.Errorf("the peer (pid %d) is in another %s namespace", cred.Pid, ns)
		}
	}
	return nil
}

// warmServer is the warm server (warmArg SOCKET -- ARGS): it keeps a
// sandbox prepared for the next command of srt ARGS, and runs the
// commands its clients send, one session each, until it has been idle
// for SRT_WARM_IDLE or its binary changed.
func warmServer(args []string) error {
	if len(args) < 2 || args[1] != "--" {
		return errors.New("usage: srt " + warmArg + " SOCKET -- ARGS")
	}
	sock, startArgs := args[0], args[2:]
	idle, err := warmIdleTime()
	if err != nil {
		return err
	}
	// One server per socket: the lock is held while it lives.
	lock, err := os.OpenFile(sock+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		// Another server serves this socket: the client that started
		// this one may dial it.
		if ready := os.NewFile(warmReadyFD, "ready"); ready != nil {
			ready.Write([]byte("served\n"))
			ready.Close()
		}
		return nil
	}
	os.Remove(sock)
	l, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: sock, Net: "unixpacket"})
	if err != nil {
		return err
	}
	l.SetUnlinkOnClose(true)
	defer l.Close()
	// The client that started this server waits for this line (fd 3).
	if ready := os.NewFile(warmReadyFD, "ready"); ready != nil {
		ready.Write([]byte("listening\n"))
		ready.Close()
	}
	defer os.Remove(lock.Name()) // still held: a server that opened it gives way
	self, _ := os.Executable()
	built, err := os.Stat(self)
	if err != nil {
		return err
	}
	w := &warm{args: startArgs, listener: l}
	defer w.close()
	// SIGTERM, SIGINT and SIGHUP end the server as idleness does: no new
	// command, the running ones finished.
	stop, done := make(chan os.Signal, 1), make(chan struct{})
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var signals sync.WaitGroup
	signals.Add(1)
	go func() {
		defer signals.Done()
		select {
		case <-stop:
			w.stop()
		case <-done:
		}
	}()
	defer func() {
		signal.Stop(stop)
		close(done)
		signals.Wait()
	}()
	w.refill()
	var sessions sync.WaitGroup
	defer sessions.Wait()
	for {
		l.SetDeadline(time.Now().Add(idle))
		conn, err := l.AcceptUnix()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && w.active() {
				continue
			}
			return nil // idle, or the listener is gone
		}
		if fi, err := os.Stat(self); err != nil || !os.SameFile(fi, built) || fi.ModTime() != built.ModTime() {
			conn.Close() // the client runs the command itself
			return nil
		}
		sessions.Add(1)
		go func() {
			defer sessions.Done()
			w.serve(conn)
		}()
	}
}

// warm is the warm server's state: the sandbox prepared for the next
// command, and the sessions running.
type warm struct {
	args []string // the arguments of the srt that started the server
	mu   sync.Mutex
	next *sandbox.Prepared
	// preparing is closed when the sandbox being prepared is ready (nil
	// when none is being prepared); running counts the sessions.
	preparing chan struct{}
	running   int
	closed    bool
	listener  *net.UnixListener
	// why the last sandbox could not be prepared ("" when it was)
	why string
}

// stop has the server take no more commands: it ends once the running
// ones have.
func (w *warm) stop() { w.listener.Close() }

// sameDir reports whether dir is still this process's working directory.
func sameDir(dir string) bool {
	here, err1 := os.Stat(".")
	there, err2 := os.Stat(dir)
	return err1 == nil && err2 == nil && os.SameFile(here, there)
}

func (w *warm) active() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running > 0
}

// refill prepares the next sandbox, unless one is ready or on its way.
func (w *warm) refill() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.next != nil || w.preparing != nil {
		return
	}
	done := make(chan struct{})
	w.preparing = done
	go func() {
		defer close(done)
		p, err := w.prepare()
		w.mu.Lock()
		closed := w.closed
		if !closed {
			w.next, w.why = p, ""
			if err != nil {
				w.why = err.Error()
			}
		}
		w.mu.Unlock()
		if closed {
			p.Close()
		}
		w.mu.Lock()
		w.preparing = nil
		w.mu.Unlock()
	}()
}

// prepare prepares a sandbox for a command of srt with the server's
// arguments, as that command's run will ask for it; its error says why
// it could not.
func (w *warm) prepare() (*sandbox.Prepared, error) {
	c, args := commandOf(w.args)
	o, err := parse(args, c)
	if err != nil {
		return nil, err
	}
	p, so, err := runOptions(c, o, nil, nil, io.Discard, io.Discard)
	if err == nil {
		err = setBwrap(p, &so)
	}
	if err != nil {
		return nil, err
	}
	so.Stderr = nil
	m, err := sandbox.NewManager(p, sandbox.ManagerOptions{})
	if err != nil {
		return nil, err
	}
	return m.Prepare(context.Background(), so)
}

// readRequest reads a client's request and its standard descriptors
// (close-on-exec, as every descriptor of the server).
func readRequest(conn *net.UnixConn) (req warmRequest, files []*os.File, err error) {
	buf := make([]byte, 1<<20)
	oob := make([]byte, unix.CmsgSpace(3*4))
	n, oobn, _, _, err := conn.ReadMsgUnix(buf, oob)
	if err != nil {
		return req, nil, err
	}
	if msgs, err := unix.ParseSocketControlMessage(oob[:oobn]); err == nil && len(msgs) == 1 {
		fds, _ := unix.ParseUnixRights(&msgs[0])
		for i, fd := range fds {
			unix.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), fmt.Sprintf("client-%d", i)))
		}
	}
	if len(files) != 3 {
		return req, files, fmt.Errorf("%d standard descriptors, want 3", len(files))
	}
	return req, files, json.Unmarshal(buf[:n], &req)
}

// debugAsked reports whether srt's arguments ask for --debug.
func debugAsked(args []string) bool {
	c, args := commandOf(args)
	o, err := parse(args, c)
	return err == nil && o.debug
}

// serves reports whether args name the settings file this server was
// started for (warmKey): it runs no other.
func (w *warm) serves(args []string) bool {
	settings := func(args []string) (string, bool) {
		c, args := commandOf(args)
		o, err := parse(args, c)
		if err != nil || c.name != "" {
			return "", false
		}
		if o.settings == "" {
			return "", true
		}
		abs, err := filepath.Abs(o.settings)
		return abs, err == nil
	}
	mine, ok1 := settings(w.args)
	theirs, ok2 := settings(args)
	return ok1 && ok2 && mine == theirs
}

// take is the prepared sandbox for a command, waiting up to warmWait
// for one on its way; nil when there is none, and then why.
func (w *warm) take() (*sandbox.Prepared, string) {
	w.mu.Lock()
	if w.next == nil && w.preparing != nil {
		ch := w.preparing
		w.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(warmWait):
		}
		w.mu.Lock()
	}
	p, why := w.next, w.why
	w.next = nil
	w.mu.Unlock()
	switch {
	case p != nil:
		why = ""
	case why == "":
		why = "the one on its way was not ready within " + warmWait.String()
	}
	return p, why
}

// close ends the prepared sandbox, once the one on its way (if any) is
// ready.
func (w *warm) close() {
	w.mu.Lock()
	w.closed = true
	preparing := w.preparing
	w.mu.Unlock()
	if preparing != nil {
		<-preparing // refill closes what it prepares once closed
	}
	w.mu.Lock()
	p := w.next
	w.next = nil
	w.mu.Unlock()
	p.Close()
}

// serve runs one client's command: srt with its arguments, its standard
// descriptors and its signals, in the prepared sandbox when it fits; it
// replies with the status, or tells the client to run the command itself
// when this server cannot (another environment or directory).
func (w *warm) serve(conn *net.UnixConn) {
	defer conn.Close()
	if samePeer(conn) != nil {
		return
	}
	req, files, err := readRequest(conn)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	reply := func(r warmReply) {
		b, _ := json.Marshal(r)
		conn.Write(b)
	}
	cwd, _ := os.Getwd()
	switch {
	case err != nil:
		reply(warmReply{Cold: "the warm server could not read the request: " + err.Error()})
		return
	case req.Cwd != cwd:
		reply(warmReply{Cold: "the warm server runs in another directory"})
		return
	case !sameDir(req.Cwd):
		// The directory was removed or replaced since the server started
		// in it: the server is of no more use.
		reply(warmReply{Cold: "the warm server's working directory was replaced"})
		w.stop()
		return
	case !slices.Equal(req.Env, os.Environ()):
		reply(warmReply{Cold: "the warm server has another environment"})
		return
	case !w.serves(req.Args):
		reply(warmReply{Cold: "the warm server serves another settings file"})
		return
	}
	w.mu.Lock()
	w.running++
	w.mu.Unlock()
	// Once the command has ended and been checked, the next sandbox is
	// prepared.
	ended := sync.OnceFunc(func() {
		w.mu.Lock()
		w.running--
		w.mu.Unlock()
		w.refill()
	})
	defer ended()
	s := &session{signals: make(chan os.Signal, 8), start: time.Now()}
	var why string
	if s.prepared, why = w.take(); why != "" && debugAsked(req.Args) {
		slog.New(slog.NewTextHandler(files[2], &slog.HandlerOptions{Level: slog.LevelDebug})).Debug("warm start: no sandbox was prepared for this command: " + why)
	}
	// The client's signals go to the command; a client that goes away
	// (SIGKILL) takes the command with it.
	var relay sync.WaitGroup
	relay.Add(1)
	go func() {
		defer relay.Done()
		b := make([]byte, 256)
		for {
			n, err := conn.Read(b)
			if err != nil || n == 0 {
				select {
				case s.signals <- syscall.SIGKILL:
				default:
				}
				return
			}
			var sig warmSignal
			if json.Unmarshal(b[:n], &sig) == nil && sig.Signal > 0 {
				select {
				case s.signals <- syscall.Signal(sig.Signal):
				default:
				}
			}
		}
	}()
	code := runIn(s, req.Args, files[0], files[1], files[2])
	s.take().Close() // a run that ended before it used it
	reply(warmReply{Code: &code})
	ended()
	conn.CloseRead()
	relay.Wait()
}
