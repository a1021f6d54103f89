// Package initstep is the sandbox's init step on Linux: the first process
// inside bubblewrap, which opens the proxies' listeners in the sandbox's
// network namespace and hands them to srt, restricts the command with the
// second layer (Landlock) and its rlimits, starts it, forwards signals to
// it and exits with its status (see Init).
//
// It starts once per run, inside every sandbox, so it links only what it
// needs: the standard library's os, os/exec and os/signal and
// golang.org/x/sys/unix, no network stack, no TLS, no JSON. Built on its
// own (cmd/srt-init, installed beside srt), it starts in about half the
// time srt does; srt falls back to running itself in this role (its
// helper role InitArg) when srt-init is missing or not of its build
// (runtime/sandbox: initProgram).
package initstep

import (
	"os"
	"syscall"
)

// Binary is the init step's own program, installed beside srt.
const Binary = "srt-init"

// InitArg, as argv[1], runs the init step (see Init).
const InitArg = "__srt_sandbox_init__"

// LimitArg, as argv[1], runs the command's trampoline: LimitArg
// NAME=SOFT:HARD... -- COMMAND... sets the rlimits (see RlimitArg) and
// executes the command in its place. The init step starts the command
// this way when the plan has limits: set on the init step itself (PID 1,
// a Go program that makes threads and maps memory when it needs them), a
// limit the command fills would kill it, and the sandbox with it: the
// kernel counts every task of the user in the sandbox against
// RLIMIT_NPROC, the init step's threads too.
const LimitArg = "__srt_limit__"

// The ports the proxies listen on inside the sandbox (the reference's).
const (
	HTTPPort  = 3128
	SOCKSPort = 1080
)

// Descriptors the init step inherits.
const (
	FDSeccomp = 3 // read by bubblewrap, not by the init step
	FDHandoff = 4 // one end of the socket pair to the host process
	FDSelf    = 5 // the init step's program, opened for exec
	FDInfo    = 6 // bubblewrap writes {"child-pid": N} here
	// FDBind and up are the write roots, opened without following a
	// link, that bubblewrap binds from /proc/self/fd/N; the init step
	// closes them with the rest it does not need.
	FDBind = 7
)

// The init step's options, each followed by its value.
const (
	// TTYArg lists the standard descriptors (0, 1, 2) that become the
	// command's terminal: --tty=0,1,2.
	TTYArg = "--tty="
	// RlimitArg sets one rlimit: --rlimit=NAME=SOFT:HARD (NAME: data,
	// nproc, cpu, nofile).
	RlimitArg = "--rlimit="
	// LandlockArg turns the second layer on, with the scopes to keep (a
	// comma-separated list, possibly empty); each LandlockWriteArg names
	// one path below which writes stay allowed.
	LandlockArg      = "--landlock="
	LandlockWriteArg = "--landlock-write="
	// WatchArg has the init step watch the command's writes (see
	// WatchedCall) and hand srt the descriptor of the watch, after the
	// listeners and the terminal.
	WatchArg = "--watch-writes"
)

// The statuses the init step ends with in the command's place, as a
// shell does (docs/srt.md#exit-status).
const (
	// ExitCannotRun: the command was found but could not be run, or the
	// init step failed before it could start it.
	ExitCannotRun = 126
	// ExitNotFound: there is no such command.
	ExitNotFound = 127
	// ExitSignal+N: signal N killed the command.
	ExitSignal = 128
)

// ExitCode is a command's status, or ExitSignal+N for a signal N.
func ExitCode(ps *os.ProcessState) int {
	if ps == nil {
		return 1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ExitSignal + int(ws.Signal())
	}
	return ps.ExitCode()
}
