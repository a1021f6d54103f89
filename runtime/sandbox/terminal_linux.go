//go:build linux

package sandbox

// The sandbox's own terminal. When one of the command's standard streams
// is a terminal, the command gets a pseudo-terminal instead: the init step
// opens it inside the sandbox (the sandbox's /dev/ptmx, so its name is a
// /dev/pts path there), makes it the command's controlling terminal, and
// hands the master side to this process, which relays between it and the
// outer terminal. No descriptor of the outer terminal enters the sandbox,
// so nothing inside can read it, reconfigure it or push input into it
// (TIOCSTI); job control, ^C and window sizes work as on any terminal.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"srt.dev/internal/pollread"
	"srt.dev/runtime/initstep"
)

// A hostTerminal is the outer terminal while a command runs on its own
// pseudo-terminal.
type hostTerminal struct {
	fds   []int    // the command's standard descriptors that are terminals
	in    *os.File // the outer terminal to read from; nil when stdin is not one
	out   io.Writer
	size  *os.File // the terminal whose window size the command sees
	saved *unix.Termios
	raw   bool

	master   *os.File
	masterFD int              // master's descriptor (master.Fd would make it blocking)
	input    *pollread.Reader // what is typed, until finish stops it
	wg       sync.WaitGroup
	output   chan struct{} // closed when the master side has nothing more
	once     sync.Once
}

// isTerminal reports whether v is an open terminal, and its file.
func isTerminal(v any) (*os.File, bool) {
	f, ok := v.(*os.File)
	if !ok || f == nil {
		return nil, false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return f, err == nil
}

// newHostTerminal returns the outer terminal of a run whose standard
// streams are stdin, stdout and stderr, or nil when none is a terminal
// (pipes and files then reach the command as they are).
func newHostTerminal(stdin io.Reader, stdout, stderr io.Writer) *hostTerminal {
	t := &hostTerminal{}
	var files []*os.File
	for i, v := range []any{stdin, stdout, stderr} {
		if f, ok := isTerminal(v); ok {
			t.fds = append(t.fds, i)
			files = append(files, f)
		}
	}
	if len(t.fds) == 0 {
		return nil
	}
	t.size = files[0]
	if t.fds[0] == 0 {
		t.in = files[0]
	}
	// What the command writes to the terminal goes to the first output
	// stream that is one; when only stdin is, the echo of what is typed
	// goes back to it.
	t.out = files[0]
	for i, fd := range t.fds {
		if fd > 0 {
			t.out = files[i]
			break
		}
	}
	t.saved, _ = unix.IoctlGetTermios(int(t.size.Fd()), unix.TCGETS)
	return t
}

// initArg is the init step's option for this terminal.
func (t *hostTerminal) initArg() string {
	var s []string
	for _, fd := range t.fds {
		s = append(s, strconv.Itoa(fd))
	}
	return initstep.TTYArg + strings.Join(s, ",")
}

// makeRaw puts the outer terminal in raw mode when the command reads from
// it: every key, ^C and ^Z included, goes to the sandbox's terminal, whose
// own line discipline echoes, edits and signals. restore undoes it.
func (t *hostTerminal) makeRaw() error {
	if t.in == nil || t.saved == nil {
		return nil
	}
	r := *t.saved
	r.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	r.Oflag &^= unix.OPOST
	r.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	r.Cflag &^= unix.CSIZE | unix.PARENB
	r.Cflag |= unix.CS8
	r.Cc[unix.VMIN], r.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(int(t.in.Fd()), unix.TCSETS, &r); err != nil {
		return fmt.Errorf("putting the terminal in raw mode: %w", err)
	}
	t.raw = true
	return nil
}

// restore gives the outer terminal back its settings.
func (t *hostTerminal) restore() {
	if t.raw {
		unix.IoctlSetTermios(int(t.in.Fd()), unix.TCSETS, t.saved)
		t.raw = false
	}
}

// attach takes the master side the init step handed over: it gives the
// sandbox's terminal the outer terminal's settings and window size, then
// relays both ways. The command starts after this (see Init).
func (t *hostTerminal) attach(fd int) error {
	if t.saved != nil {
		// On a master, TCSETS sets the terminal the command sees: it
		// edits and signals as the user's own (erase key, UTF-8).
		inner := *t.saved
		if t.in == nil {
			// The outer terminal, not in raw mode, processes the
			// output (newline to CR LF) as for any program.
			inner.Oflag &^= unix.OPOST
		}
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &inner); err != nil {
			unix.Close(fd)
			return fmt.Errorf("setting up the sandbox's terminal: %w", err)
		}
	}
	// Non-blocking, so that reads wait in the poller and end at a
	// deadline.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return err
	}
	t.master, t.masterFD = os.NewFile(uintptr(fd), "srt-pty-master"), fd
	t.resize()
	t.output = make(chan struct{})
	go func() {
		defer close(t.output)
		io.Copy(t.out, t.master) // ends with EIO once no one inside holds the terminal
	}()
	if t.in != nil {
		// What is typed goes to the sandbox's terminal. The outer
		// terminal's file description is shared with the user's shell,
		// whose blocking mode must not change: it is read through poll.
		in, err := pollread.New(int(t.in.Fd()))
		if err != nil {
			return err
		}
		t.input = in
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			io.Copy(t.master, in)
		}()
	}
	return nil
}

// resize copies the outer terminal's window size to the sandbox's; the
// kernel sends SIGWINCH to its foreground job when the size changed.
func (t *hostTerminal) resize() {
	if t.master == nil {
		return
	}
	ws, err := unix.IoctlGetWinsize(int(t.size.Fd()), unix.TIOCGWINSZ)
	if err == nil {
		unix.IoctlSetWinsize(t.masterFD, unix.TIOCSWINSZ, ws)
	}
}

// followSize copies the outer terminal's size to the sandbox's now and
// at every change, until stop is called. A nil terminal follows nothing.
func (t *hostTerminal) followSize() (stop func()) {
	if t == nil {
		return func() {}
	}
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	t.resize() // a change before the line above
	end, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-winch:
				t.resize()
			case <-end:
				return
			}
		}
	}()
	return func() { signal.Stop(winch); close(end); <-ended }
}

// finish, after the sandbox has ended, writes out what the command left
// on its terminal, stops the relay and restores the outer terminal. It
// may be called more than once.
func (t *hostTerminal) finish() {
	t.once.Do(func() {
		if t.master != nil {
			// Every process inside is gone, so the output ends (EIO)
			// as soon as it is read; the deadline only bounds it.
			t.master.SetReadDeadline(time.Now().Add(2 * time.Second))
			<-t.output
		}
		if t.input != nil {
			t.input.Stop()
			t.wg.Wait()
			t.input.Close()
		}
		if t.master != nil {
			t.master.Close()
		}
		t.restore()
	})
}
