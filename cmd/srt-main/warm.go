package main

// Warm start (docs/srt.md#warm-start): with SRT_WARM=on, srt (the front,
// cmd/srt) hands its command to a warm server of its user, which keeps a
// sandbox prepared for the next command (sandbox.Manager.Prepare) and
// runs the command as srt-main would, in that sandbox when it fits, with
// the client's standard descriptors, and sends back the exit status
// (cmd/internal/warmwire). What is the same on every system is here;
// warm_linux.go has the server.

import (
	"os"
	"strconv"
	"time"

	"srt.dev/runtime/sandbox"
)

// warmIdle is how long the warm server waits for a command before it
// ends (SRT_WARM_IDLE, in seconds, overrides it).
const warmIdle = 10 * time.Minute

// warmWait bounds how long a command waits for the sandbox the server is
// preparing before it starts one of its own.
const warmWait = 2 * time.Second

// A session is one command the warm server runs for its client: the
// signals the client relays, the sandbox prepared for it (nil when none
// is, or once the run has taken it), and when it came.
type session struct {
	signals  chan os.Signal
	prepared *sandbox.Prepared
	start    time.Time
}

// take hands the prepared sandbox to the run, once.
func (s *session) take() *sandbox.Prepared {
	p := s.prepared
	s.prepared = nil
	return p
}

// warmIdleTime reads SRT_WARM_IDLE.
func warmIdleTime() (time.Duration, error) {
	v := os.Getenv("SRT_WARM_IDLE")
	if v == "" {
		return warmIdle, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fail("SRT_WARM_IDLE must be a whole number of seconds above 0, not %q", v)
	}
	return time.Duration(n) * time.Second, nil
}
