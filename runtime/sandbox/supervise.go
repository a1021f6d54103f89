//go:build linux || darwin

package sandbox

import (
	"context"
	"os"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a command has to exit after SIGTERM when its
// context ends, before it is killed.
var stopGrace = 2 * time.Second

// supervise waits for the sandbox to end (done), delivering each signal
// of sigs to the command with send and, when ctx ends, SIGTERM, then kill
// after stopGrace. Both runtimes use it; what "the command" is differs
// (the init step inside bubblewrap, sandbox-exec).
func supervise(ctx context.Context, done <-chan error, sigs <-chan os.Signal, send func(syscall.Signal), kill func()) error {
	var grace <-chan time.Time
	cancelled := ctx.Done()
	for {
		select {
		case s := <-sigs:
			send(s.(syscall.Signal))
		case <-cancelled:
			cancelled = nil
			send(syscall.SIGTERM)
			grace = time.After(stopGrace)
		case <-grace:
			kill()
		case err := <-done:
			return err
		}
	}
}

// target is a process to signal that may not be known yet: signals sent
// before set are queued and delivered by set.
type target struct {
	mu      sync.Mutex
	pid     int  // 0 while unknown or when there is none
	known   bool // set was called
	pending []syscall.Signal
}

// set names the process. A pid <= 0 means there is none: queued and later
// signals are dropped rather than sent to kill(0), srt's own group.
func (t *target) set(pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.known = true
	if pid <= 0 {
		t.pending = nil
		return
	}
	t.pid = pid
	for _, s := range t.pending {
		syscall.Kill(pid, s)
	}
	t.pending = nil
}

// signal delivers s now, or once the process is known.
func (t *target) signal(s syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.pid > 0:
		syscall.Kill(t.pid, s)
	case !t.known:
		t.pending = append(t.pending, s)
	}
}

// kill sends SIGKILL if the process is known.
func (t *target) kill() { t.signal(syscall.SIGKILL) }
