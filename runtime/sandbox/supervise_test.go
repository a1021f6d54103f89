//go:build linux

package sandbox

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestTarget: a signal sent before the process is known reaches it once
// it is; with no process (pid 0) nothing is sent anywhere.
func TestTarget(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var tg target
	tg.signal(syscall.SIGTERM) // queued
	tg.set(cmd.Process.Pid)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("sleep ended with %v, want SIGTERM", err)
	}
	var none target
	none.signal(syscall.SIGTERM)
	none.set(0)
	none.kill() // must not signal kill(0), this test's own group
	if len(none.pending) != 0 {
		t.Errorf("pending after set(0): %v", none.pending)
	}
}

// TestSupervise: a signal is passed on; the end of the context sends
// SIGTERM, then kills after the grace period; the sandbox's end returns
// its error.
func TestSupervise(t *testing.T) {
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	sigs := make(chan os.Signal, 1)
	var got []string
	sent := make(chan struct{}, 4)
	send := func(s syscall.Signal) { got = append(got, s.String()); sent <- struct{}{} }
	kill := func() { got = append(got, "kill"); done <- errors.New("killed") }
	sigs <- syscall.SIGHUP
	go func() { <-sent; cancel() }()
	err := supervise(ctx, done, sigs, send, kill)
	if err == nil || err.Error() != "killed" {
		t.Errorf("supervise = %v, want the sandbox's error", err)
	}
	if want := []string{"hangup", "terminated", "kill"}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("sent %v, want %v", got, want)
	}
}
