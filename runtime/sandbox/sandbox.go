// Package sandbox runs a command in bubblewrap under a compiled policy:
// the plan resolved for this host, the seccomp program passed by file
// descriptor, and the egress proxies served by this process on listeners
// that were opened inside the sandbox's network namespace (design §3): the
// first process in the sandbox is this binary in its init role; it opens
// 127.0.0.1:3128 and 127.0.0.1:1080 there, hands the listening sockets to
// the host process over an inherited socket pair (SCM_RIGHTS), and execs
// the command. No relay process, no socket file on disk.
package sandbox

import (
	"io"
	"log/slog"

	"srt.dev/runtime/violations"
)

// The ports the proxies listen on inside the sandbox (the reference's).
const (
	HTTPPort  = 3128
	SOCKSPort = 1080
)

// InitArg, as argv[1], runs this binary in its init role (see Init).
const InitArg = "__srt_sandbox_init__"

// Options configure a run. The zero value of every optional field is a
// sensible default.
type Options struct {
	// Bwrap is the bubblewrap binary; "" means bwrap on PATH.
	Bwrap string
	// Home and Cwd; "" means $HOME and the current directory.
	Home, Cwd string
	// Stdin, Stdout, Stderr of the command; nil means this process's.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Env is the command's environment before srt adds its variables;
	// nil means this process's.
	Env []string
	// Log receives debug lines; nil means none.
	Log *slog.Logger
	// DryRun returns the bwrap argv instead of running it.
	DryRun bool
	// CommandID is the command's attribution key and the id of its
	// per-command allow list (Manager.RegisterCommandNetworkLists); ""
	// means the command text (CommandText, else argv joined by spaces).
	CommandID   string
	CommandText string
	// ForwardSignals forwards SIGINT, SIGTERM and SIGHUP sent to this
	// process to the command instead of letting them end this process
	// (what the srt CLI wants; a library usually cancels ctx instead).
	ForwardSignals bool
	// Started, if set, is called once the command's sandbox is up and
	// its proxies serve (the srt CLI starts reading --control-fd then).
	Started func()
	// Protect are host directories the command may not write, whatever
	// the policy says: srt's own state (its policy cache), which a
	// sandboxed command could otherwise rewrite to weaken a later run. The
	// runtime adds its placeholder registry itself.
	Protect []string
	// SeatbeltProfile is the macOS profile to run (a reviewed
	// macos/profile.sb); nil means the one emitted from the policy. Linux
	// ignores it.
	SeatbeltProfile []byte
}

// Result is how the command ended.
type Result struct {
	// ExitCode is the command's exit status, or 128+N when a signal N
	// killed it.
	ExitCode int
	// Argv is the bubblewrap command line (set for DryRun, and always).
	Argv []string
	// Violations are the connections the proxies refused this command,
	// after ignoreViolations.
	Violations []violations.Entry
}

// A Check is one thing the host must allow for the sandbox to work.
type Check struct {
	Name   string
	OK     bool
	Detail string
	// Remedy says what to do when the check fails.
	Remedy string
	// Note is what a passing check means for the user, if anything.
	Note string
}

// ReapArg, as argv[1], runs this binary as the reaper: srt __srt_reap__ DIR
// RECORD waits until its standard input ends (srt has exited or been
// killed) and the run's record is unlocked, then sweeps the registry.
const ReapArg = "__srt_reap__"
