package main

// Warm start (docs/srt.md#warm-start): with SRT_WARM=on, srt hands its
// command to a warm server of its user, which keeps a sandbox prepared
// for the next command (sandbox.Manager.Prepare) and runs the command as
// srt would, in that sandbox when it fits, with the client's standard
// descriptors, and sends back the exit status. The client starts the
// server when there is none. What is the same on every system is here;
// warm_linux.go has the client and the server.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"time"

	"srt.dev/runtime/sandbox"
)

// warmArg, as argv[1], runs the warm server: warmArg SOCKET -- ARGS,
// where ARGS are the arguments of the srt that started it.
const warmArg = "__srt_warm__"

// warmReadyFD is the descriptor the warm server says it listens on: the
// client that starts it waits for that line (startWarmServer).
const warmReadyFD = 3

// warmIdle is how long the warm server waits for a command before it
// ends (SRT_WARM_IDLE, in seconds, overrides it).
const warmIdle = 10 * time.Minute

// warmStart bounds how long a client waits for the server it started to
// listen.
const warmStart = 5 * time.Second

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

// warmOn reads SRT_WARM: on or off (the default).
func warmOn() (bool, error) {
	switch v := os.Getenv("SRT_WARM"); v {
	case "", "off":
		return false, nil
	case "on":
		return true, nil
	default:
		return false, fail("SRT_WARM must be on or off, not %q", v)
	}
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

// warmKey names the warm server that serves a command: one per user,
// srt binary (by identity: a new build has a server of its own), working
// directory, environment and settings file, which is what a sandbox is
// prepared for.
func warmKey(self, cwd string, env []string, settings string) (string, error) {
	fi, err := os.Stat(self)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\x00%s\x00%d\x00%d\x00%s\x00%s\x00", os.Getuid(), self, fi.Size(), fi.ModTime().UnixNano(), cwd, settings)
	for _, kv := range env {
		fmt.Fprintf(h, "%s\x00", kv)
	}
	return hex.EncodeToString(h.Sum(nil)[:16]), nil
}

// A warmRequest is what the client sends, with its standard descriptors.
type warmRequest struct {
	Args []string `json:"args"`
	Cwd  string   `json:"cwd"`
	Env  []string `json:"env"`
}

// A warmReply is what the server sends: the command's exit status, or
// why the client is to run the command itself (Cold).
type warmReply struct {
	Code *int   `json:"code,omitempty"`
	Cold string `json:"cold,omitempty"`
}

// A warmSignal is a signal the client relays.
type warmSignal struct {
	Signal int `json:"signal"`
}
