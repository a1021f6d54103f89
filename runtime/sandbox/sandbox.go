// Package sandbox runs commands under a compiled policy. A Manager holds
// one policy, its violation store and audit log, and runs many commands
// concurrently, each in its own sandbox with its own proxy listeners and
// proxy password; Run runs one command with a one-off Manager.
//
// A run goes the same way on every operating system (run.go): prepared
// (everything a dry run shows, every error before anything starts),
// started, supervised until the command ends, finished and cleaned up;
// each operating system supplies those steps.
//
// On Linux a run resolves the plan for this host, passes the seccomp
// program to bubblewrap by file descriptor, and serves the HTTP and SOCKS5
// proxies from this process on listeners opened inside the sandbox's
// network namespace: the first process in the sandbox is the init step
// (runtime/initstep: srt-init beside this binary, or this binary in that
// role, InitArg). It closes what it inherited and makes itself
// undumpable, opens 127.0.0.1:3128 and 127.0.0.1:1080 there, hands the
// listening sockets to the host process over an inherited socket pair
// (SCM_RIGHTS), and starts the command as its child. No relay process, no socket
// file on disk. A reaper (ReapArg) removes the run's placeholders if this
// process dies. See docs/srt.md.
//
// A run's proxies end with it: when Run returns, their listeners, every
// connection they accepted (tunnels included) and every connection they
// opened upstream are closed, and their goroutines have returned, so a
// program may run any number of sandboxes one after another. So has every
// other goroutine the run started, but the Ask callback's, whose run
// does not wait for a callback that does not heed its context; the
// reaper, a process that must outlive this one, is no child of it.
//
// When one of the command's standard streams is a terminal, the init step
// opens a pseudo-terminal inside the sandbox for it and hands the master
// side over too; this process relays between it and the outer terminal,
// which never enters the sandbox. Signals for the command go to its whole
// process group (docs/terminal-and-signals.md).
//
// On macOS a run opens the proxies on ephemeral loopback ports and execs
// sandbox-exec with the Seatbelt profile and its parameters; this has never
// run on a real Mac. On Windows Run refuses: the plan is for review only.
package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/violations"
)

// The ports the proxies listen on inside the sandbox (the reference's).
const (
	HTTPPort  = initstep.HTTPPort
	SOCKSPort = initstep.SOCKSPort
)

// InitArg and LimitArg, as argv[1], run srt (or srt-init) as the
// sandbox's init step and as the command's trampoline (see
// runtime/initstep).
const (
	InitArg  = initstep.InitArg
	LimitArg = initstep.LimitArg
)

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
	// Signals, if set, are signals for the command that the caller
	// delivers (a server relaying its client's), as ForwardSignals
	// delivers the process's.
	Signals chan os.Signal
	// Prepared, if set, is a sandbox started ahead for this run
	// (Manager.Prepare): Run uses it when it is the sandbox the run would
	// start now, and ends it otherwise (the debug log says why). Either
	// way it is used up.
	Prepared *Prepared
	// Started, if set, is called once the command's sandbox is up and
	// its proxies serve (the srt CLI starts reading --control-fd then).
	Started func()
	// Step, if set, is called as each step of a run ends, with its name:
	// "prepared", "registered", "bubblewrap started", "handed over",
	// "recorded", "command started", "command ended", "checked",
	// "released" (Linux). The srt CLI times them (SRT_STEP_TIMES).
	Step func(name string)
	// State are srt's own files on this host, by kind
	// (policy.SrtState): the settings file or plan directory in use, the
	// programs, the policy cache, the audit log. Every sandbox keeps them
	// read-only (the quarantine hidden), whatever the policy says: a
	// command that could change them would change the policy of a later
	// run. The runtime adds its registry and the quarantine itself.
	State map[policy.StateKind][]string
	// LinuxPlan is the compiled Linux plan to run as it is (srt run
	// --plan); nil means the plan compiled from the Manager's policy. The
	// policy still decides the network (what the proxies allow); the plan
	// decides the sandbox. macOS ignores it. Whether to trust a plan read
	// from a directory is the caller's decision: srt run --plan asks
	// runtime/trust.
	LinuxPlan *LinuxPlan
	// SeatbeltProfile is the macOS profile to run (a reviewed
	// macos/profile.sb); nil means the one emitted from the policy. Linux
	// ignores it.
	SeatbeltProfile []byte
	// CheckLimits bound the walks of the write roots before and after the
	// command (Linux); nil means quarantine.DefaultLimits. A walk that
	// reaches one fails closed: before, the command does not start;
	// after, the tree is left unchecked (Result.Unchecked).
	CheckLimits *quarantine.Limits
	// NoWriteWatch turns off the watch of the command's writes, which
	// reports each write the sandbox refused (Linux; docs/srt.md).
	NoWriteWatch bool
}

// checkLimits are the limits of the run's walks (Options.CheckLimits).
func (o *Options) checkLimits() quarantine.Limits {
	if o.CheckLimits != nil {
		return *o.CheckLimits
	}
	return quarantine.DefaultLimits
}

// LinuxPlan is an artifact directory's Linux plan, as it was reviewed.
type LinuxPlan struct {
	// Name is the path Args was read from, for messages.
	Name string
	// Args is linux/bwrap.args: its --option lines are passed to bubblewrap
	// word for word, its @ steps resolved for this host.
	Args []byte
	// Seccomp are the programs (linux/seccomp.<arch>.bpf) by architecture;
	// the one of this machine is handed to bubblewrap byte for byte.
	Seccomp map[seccomp.Arch][]byte
	// Home and Cwd, when set, are the host a concrete plan was written
	// for: it runs only with the same home and working directories.
	Home, Cwd string
}

// Result is how the command ended.
type Result struct {
	// ExitCode is the command's exit status, or initstep.ExitSignal+N
	// (128+N) when a signal N killed it.
	ExitCode int
	// Argv is the bubblewrap command line (set for DryRun, and always).
	// It holds the run's proxy password: a log shows Redacted instead.
	Argv []string
	// ArgvLines are, for each of Argv, the line of linux/bwrap.args it
	// came from; 0 for what srt adds (the bubblewrap binary, srt's own
	// state, the init step and the command). Linux only.
	ArgvLines []int
	// Violations are the connections the proxies refused this command,
	// after ignoreViolations; on Linux also the protected names the
	// quarantine moved, the resource limits reached and, where srt can
	// tell (root, the kernel's audit on: docs/layers.md), the writes the
	// second layer refused.
	Violations []violations.Entry
	// UnusedLoopback are the allow rules, as they stood when the command
	// started, that name this host's loopback (localhost, 127.0.0.1,
	// [::1], with or without a port) and let no connection through the
	// proxies. A client that connected to one of them directly, not
	// through the proxy, did not reach this host's loopback: on Linux it
	// found the sandbox's own, where nothing of this host listens; on
	// macOS the profile refused it. Empty on macOS with
	// network.allowLocalBinding, where the command reaches this host's
	// loopback directly.
	UnusedLoopback []policy.HostRule
	// Quarantined are the protected names the command wrote below its
	// write roots, moved to the quarantine when it ended (Linux).
	Quarantined []quarantine.Item
	// Limits are the resource limits (limits.*) the sandbox reached, as
	// far as this host can tell (Linux; docs/layers.md#resource-limits).
	Limits []LimitHit
	// Unchecked, when not empty, says what the check after the run could
	// not vouch for (Linux): a protected name planted there may still be
	// in the tree, which stays unchecked until srt quarantine check has
	// checked it; no run starts there meanwhile. srt exits with
	// ExitUnchecked.
	Unchecked []string
	// secrets are the values of Argv that no log may show (Redacted).
	secrets []string
}

// Redaction stands for a secret in what Result.Redacted returns.
const Redaction = "<redacted>"

// Redacted is Argv as a log may show it: each secret of the run (the
// proxy password its proxy variables carry) replaced by Redaction,
// wherever it appears in a word.
func (r *Result) Redacted() []string {
	out := make([]string, len(r.Argv))
	for i, a := range r.Argv {
		for _, s := range r.secrets {
			if s != "" {
				a = strings.ReplaceAll(a, s, Redaction)
			}
		}
		out[i] = a
	}
	return out
}

// Status is the exit status the run ends with: ExitUnchecked when the
// check after the run could not vouch for everything (Unchecked),
// whatever the command's status; else ExitCode.
func (r *Result) Status() int {
	if len(r.Unchecked) > 0 {
		return ExitUnchecked
	}
	return r.ExitCode
}

// ExitUnchecked is srt's exit status when the check after the run could
// not vouch for the tree (Result.Unchecked), or when a run does not start
// because an earlier run left its tree unchecked (UncheckedError),
// whatever the command's own status was.
const ExitUnchecked = 125

// An UncheckedError refuses a run in a tree an earlier run left
// unchecked (see Result.Unchecked).
type UncheckedError struct {
	Trees []UncheckedTree
}

// An UncheckedTree is what an earlier run could not check: its write
// roots, when, and what it could not vouch for.
type UncheckedTree struct {
	Roots []string
	Time  time.Time
	Why   []string
}

func (e *UncheckedError) Error() string {
	var b strings.Builder
	b.WriteString("an earlier run left this tree unchecked, so no run starts here until it has been checked:")
	for _, t := range e.Trees {
		fmt.Fprintf(&b, "\n  the run of %s, below %s, could not check: %s", t.Time.Local().Format("2006-01-02 15:04:05"), quotePaths(t.Roots), strings.Join(t.Why, "; "))
	}
	b.WriteString("\nA git hook or shell start-up file planted there could run commands on this host: do not run git or a shell there yet. Run \"srt quarantine check\": it checks the tree again, without limits, and moves what it finds.")
	return b.String()
}

// quotePaths is the paths, each quoted, joined with commas.
func quotePaths(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = strconv.Quote(p)
	}
	return strings.Join(q, ", ")
}

// A LimitHit is a resource limit the sandbox reached.
type LimitHit struct {
	// Kind is the limit; Key its settings key, Value its value.
	Kind  policy.LimitKind
	Key   string
	Value int64
	// What happened, e.g. "the kernel killed 1 process, out of memory".
	What string
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
// RECORD TMPDIR waits until its standard input ends (srt has exited or been
// killed) and the run's record is unlocked, then sweeps the registry (DIR)
// and the runs' temporary directories (TMPDIR). Every Linux run with a
// TMPDIR starts it: a program that calls Manager.Run must handle it as it
// handles InitArg (cmd/srt-main does).
const ReapArg = "__srt_reap__"
