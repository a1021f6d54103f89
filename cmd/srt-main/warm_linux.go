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
	"os/signal"
	"path/filepath"
	"slices"
	"srt.dev/cmd/internal/cmdline"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/cmd/internal/warmwire"
	"srt.dev/runtime/sandbox"
)

// warmServer is the warm server (warmwire.Arg SOCKET -- ARGS): it keeps a
// sandbox prepared for the next command of srt ARGS, and runs the
// commands its clients send, one session each, until it has been idle
// for SRT_WARM_IDLE or its binary changed.
func warmServer(args []string) error {
	if len(args) < 2 || args[1] != "--" {
		return errors.New("usage: srt " + warmwire.Arg + " SOCKET -- ARGS")
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
		if ready := os.NewFile(warmwire.ReadyFD, "ready"); ready != nil {
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
	if ready := os.NewFile(warmwire.ReadyFD, "ready"); ready != nil {
		ready.Write([]byte("listening\n"))
		ready.Close()
	}
	defer os.Remove(lock.Name()) // still held: a server that opened it gives way
	self, _ := os.Executable()
	built, err := os.Stat(self)
	if err != nil {
		return err
	}
	w := &warm{args: startArgs, listener: l, self: self, built: built}
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
	args []string // the options of the srt that started the server (no command)
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
	// self is srt-main, as it was when the server started (built).
	self  string
	built os.FileInfo
}

// replaced reports whether srt-main was replaced since the server
// started: its commands are then the new srt-main's to run.
func (w *warm) replaced() bool {
	fi, err := os.Stat(w.self)
	return err != nil || !os.SameFile(fi, w.built) || fi.ModTime() != w.built.ModTime()
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
	c, args := cmdline.Of(w.args)
	o, err := cmdline.Parse(args, c)
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
func readRequest(conn *net.UnixConn) (req warmwire.Request, files []*os.File, err error) {
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
	c, args := cmdline.Of(args)
	o, err := cmdline.Parse(args, c)
	return err == nil && o.Debug
}

// serves reports whether args name the settings file this server was
// started for (warmKey): it runs no other.
func (w *warm) serves(args []string) bool {
	settings := func(args []string) (string, bool) {
		c, args := cmdline.Of(args)
		o, err := cmdline.Parse(args, c)
		if err != nil || c.Name != "" {
			return "", false
		}
		if o.Settings == "" {
			return "", true
		}
		abs, err := filepath.Abs(o.Settings)
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
// when this server cannot (another environment, directory or settings
// file, or not a command it runs: warmwire.WhyNot).
func (w *warm) serve(conn *net.UnixConn) {
	defer conn.Close()
	if peerOf(conn) != nil {
		return
	}
	req, files, err := readRequest(conn)
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	cwd, _ := os.Getwd()
	why := ""
	switch {
	case err != nil:
		why = "the warm server could not read the request: " + err.Error()
	case w.replaced():
		why = w.self + " was replaced since the warm server started: the server ends"
		w.stop()
	case req.Cwd != cwd:
		why = "the warm server runs in another directory"
	case !sameDir(req.Cwd):
		// The directory was removed or replaced since the server started
		// in it: the server is of no more use.
		why = "the warm server's working directory was replaced"
		w.stop()
	case !slices.Equal(req.Env, os.Environ()):
		why = "the warm server has another environment"
	default:
		if why = warmwire.WhyNot(req.Args); why == "" && !w.serves(req.Args) {
			why = "the warm server serves another settings file"
		}
	}
	if why != "" {
		reply(conn, warmwire.Reply{Cold: why})
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
			var sig warmwire.Signal
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
	reply(conn, warmwire.Reply{Code: &code})
	ended()
	conn.CloseRead()
	relay.Wait()
}

// reply sends the client a reply.
func reply(conn *net.UnixConn, r warmwire.Reply) {
	b, _ := json.Marshal(r)
	conn.Write(b)
}

// peerOf refuses the client unless it is of this user, in this process's
// user and PID namespaces (warmwire.SamePeer).
func peerOf(conn *net.UnixConn) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	var perr error
	if err := raw.Control(func(fd uintptr) { perr = warmwire.SamePeer(int(fd)) }); err != nil {
		return err
	}
	return perr
}
