package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/cmd/internal/cmdline"
	"srt.dev/cmd/internal/warmwire"
	"srt.dev/runtime/private"
)

// warmStart bounds how long srt waits for the warm server it started to
// listen.
const warmStart = 5 * time.Second

// warm hands srt's command (args) to the warm server when SRT_WARM is
// on and the server can run it: served says whether it did, and code is
// then the command's exit status. Without a server, it starts one
// (srt-main, prog) and hands it the command. Whatever stops it, srt-main
// runs the command instead, and --debug says why.
func warm(self, prog string, args []string) (code int, served bool) {
	switch v := os.Getenv("SRT_WARM"); v {
	case "", "off":
		return 0, false
	case "on":
	default:
		fmt.Fprintf(os.Stderr, "srt: SRT_WARM must be on or off, not %q\n", v)
		return 1, true
	}
	c, rest := cmdline.Of(args)
	o, err := cmdline.Parse(rest, c)
	if err != nil {
		return 0, false // srt-main says what is wrong
	}
	debug := func(string) {}
	if o.Debug {
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		debug = func(msg string) { log.Debug("warm start: " + msg) }
	}
	code, served, why := handOver(self, prog, args, o)
	if served {
		debug("the warm server ran the command")
	} else {
		debug("this command runs here: " + why)
	}
	return code, served
}

// handOver is warm once it is on: why says why the server did not run
// the command.
func handOver(self, prog string, args []string, o *cmdline.Options) (code int, served bool, why string) {
	if why := warmwire.WhyNot(args); why != "" {
		return 0, false, why
	}
	for fd := 0; fd < 3; fd++ {
		if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
			// A command on a terminal gets one of its own, which the
			// server cannot attach yet.
			return 0, false, "a terminal"
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return 0, false, fmt.Sprintf("standard descriptor %d is not open", fd)
		}
	}
	sock, err := socket(self, prog, o.Settings)
	if err != nil {
		return 0, false, err.Error()
	}
	fd, err := dial(sock)
	if err != nil {
		// None yet: one starts, and serves this command too.
		// The server is given the options, not this command, which
		// ps would show for as long as the server lives.
		if err := startServer(prog, sock, o.Options); err != nil {
			return 0, false, "no warm server, and none could be started: " + err.Error()
		}
		if fd, err = dial(sock); err != nil {
			return 0, false, "the warm server started, but does not answer: " + err.Error()
		}
	}
	defer unix.Close(fd)
	if err := warmwire.SamePeer(fd); err != nil {
		return 0, false, err.Error()
	}
	cwd, err := os.Getwd()
	if err != nil {
		return 0, false, err.Error()
	}
	req, err := json.Marshal(warmwire.Request{Args: args, Cwd: cwd, Env: os.Environ()})
	if err != nil {
		return 0, false, err.Error()
	}
	if err := unix.Sendmsg(fd, req, unix.UnixRights(0, 1, 2), nil, 0); err != nil {
		return 0, false, "the warm server did not take it: " + err.Error()
	}
	// The server runs the command from here on: signals are relayed to
	// it, and srt ends with the command.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	replies := make(chan warmwire.Reply, 1)
	go func() {
		defer close(replies)
		buf := make([]byte, 4096)
		n, err := unix.Read(fd, buf)
		for err == unix.EINTR {
			n, err = unix.Read(fd, buf)
		}
		var r warmwire.Reply
		if err == nil && n > 0 && json.Unmarshal(buf[:n], &r) == nil {
			replies <- r
		}
	}()
	for {
		select {
		case s := <-sigs:
			b, _ := json.Marshal(warmwire.Signal{Signal: int(s.(syscall.Signal))})
			unix.Write(fd, b)
		case r, ok := <-replies:
			switch {
			case !ok:
				fmt.Fprintln(os.Stderr, "srt: the warm server ended before the command did: its status is not known (SRT_WARM=off runs commands without it)")
				return 1, true, ""
			case r.Cold != "":
				signal.Reset()
				return 0, false, r.Cold
			case r.Code == nil:
				fmt.Fprintln(os.Stderr, "srt: the warm server sent no status")
				return 1, true, ""
			}
			return *r.Code, true, ""
		}
	}
}

// socket is the warm server's socket for this command: in the runs'
// temporary directory, which every sandbox sees empty, named by what a
// sandbox is prepared for: the user, srt and srt-main (by identity: a
// new build has a server of its own), the working directory, the
// environment and the settings file.
func socket(self, prog, settings string) (string, error) {
	dir := private.TmpDir()
	// Made before any sandbox of this user starts with a server's socket
	// in it (a sandbox hides it only when it exists as it starts).
	if err := private.Dir(dir); err != nil {
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
	h := fnv.New128a()
	fmt.Fprintf(h, "%d\x00", os.Getuid())
	for _, p := range []string{self, prog} {
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\x00", p, fi.Size(), fi.ModTime().UnixNano())
	}
	fmt.Fprintf(h, "%s\x00%s\x00", cwd, settings)
	for _, kv := range os.Environ() {
		fmt.Fprintf(h, "%s\x00", kv)
	}
	sock := filepath.Join(dir, "warm-"+hex.EncodeToString(h.Sum(nil)))
	if len(sock) >= len(unix.RawSockaddrUnix{}.Path) {
		return "", fmt.Errorf("the warm server's socket %s is a longer path than a socket may have", sock)
	}
	return sock, nil
}

// dial connects to the warm server's socket.
func dial(sock string) (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// startServer starts the warm server (srt-main, prog) for srt's options
// (args) in a session of its own, with this process's working directory and environment, lets
// it go, and returns once it listens (or another server of the same
// socket does).
func startServer(prog, sock string, args []string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return err
	}
	defer null.Close()
	p, err := os.StartProcess(prog, append([]string{prog, warmwire.Arg, sock, "--"}, args...), &os.ProcAttr{
		Files: []*os.File{null, null, null, w}, // warmwire.ReadyFD: the server says it listens
		Sys:   &syscall.SysProcAttr{Setsid: true},
	})
	w.Close()
	if err != nil {
		return err
	}
	p.Release()
	r.SetReadDeadline(time.Now().Add(warmStart))
	b := make([]byte, 16)
	if n, err := r.Read(b); n == 0 {
		return fmt.Errorf("it did not say it listens within %v: %v", warmStart, err)
	}
	return nil
}
