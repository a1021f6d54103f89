//go:build linux || darwin

package sandbox

// The run of one command, the same on every operating system that has a
// sandbox: Run takes it through its steps in order, and each operating
// system supplies them (run_linux.go and start_linux.go: bubblewrap and
// the init step; run_darwin.go: sandbox-exec with the Seatbelt profile).
// Windows and the others refuse (sandbox_windows.go, sandbox_other.go).
//
// Each operating system supplies these steps, as methods of run:
//
//	prepare       everything --dry-run shows, and every error of the
//	              settings or the host, before anything starts
//	discard       undoes what prepare made, for a run that does not start
//	start         the sandbox (cmd, signal, kill) and the proxies that
//	              serve it
//	stopWatching  stops what watched the command, once it has ended
//	finish        what only this system finds after the command, and
//	              why the run failed
//
// What a step makes that the run's end undoes (a listener, a scratch
// directory, a terminal in raw mode) it hands to atEnd; Run undoes it
// all, last made first, as defers would. The signals for the command
// are caught (catchSignals) where each system's steps say: Linux's
// before it prepares, so that none ends srt with the terminal raw,
// macOS's as its sandbox starts.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/violations"
)

// Run runs argv (a program and its arguments) in a sandbox of the
// Manager's policy, as it is when the command starts. When ctx ends, the
// command gets SIGTERM, and SIGKILL 2 s later.
//
// A run is prepared (prepare), started (start: the sandbox, and the
// proxies that serve it), supervised until the sandbox ends (supervise:
// signals, the context, the SIGTERM→SIGKILL wait), finished (finish:
// what the run found after the command) and cleaned up. With an audit
// log (ManagerOptions.Audit), a run but a dry run has a start record
// before anything else, and an exit record with Result.Status once every
// other record of the run is written; a run that fails has no exit
// record, and one whose start record cannot be written does not start.
func (m *Manager) Run(ctx context.Context, argv []string, o Options) (*Result, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	r, err := m.newRun(argv, o)
	if err != nil {
		return nil, err
	}
	defer r.end()
	if !o.DryRun {
		if err := r.auditStart(); err != nil {
			return nil, err
		}
	}
	if o.DryRun || !r.usePrepared(ctx, o.Prepared) {
		o.Prepared.Close()
		if err := r.prepare(); err != nil {
			return nil, err
		}
		r.out.secrets = append(r.out.secrets, r.token)
		if o.DryRun {
			r.discard()
			return r.out, nil
		}
		if err := r.start(ctx); err != nil {
			return nil, err
		}
	}
	if o.Started != nil {
		o.Started()
	}
	werr := supervise(ctx, r.wait(), r.sigs, r.signal, r.kill)
	r.stopWatching()
	// The listeners close at the end; decisions still in flight are
	// recorded, but the result holds those made while the command ran.
	out := r.out
	out.Violations = r.rec.entries()
	out.UnusedLoopback = r.unusedLoopback()
	out.ExitCode = initstep.ExitCode(r.cmd.ProcessState)
	if err := r.finish(); err != nil {
		return out, err
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return out, werr
	}
	r.auditExit(out.Status())
	return out, nil
}

// A run is one command's run as Run takes it through its steps; osRun
// holds what only one operating system's steps need.
type run struct {
	osRun
	m    *Manager
	p    *policy.Policy // the policy as the command starts
	o    Options
	argv []string
	// id, text and key are the command's attribution (see
	// Options.attribution); token is the run's proxy password, a secret
	// of this run alone.
	id, text, key, token string
	// allowed are the allow lists for the command as it starts: the
	// policy's, then the command's own.
	allowed []policy.HostList
	// out is the result: from prepare on, the sandbox's command line.
	out *Result
	// env is the environment the sandbox starts with: removed variables
	// gone, masked ones with their stand-ins.
	env []string
	// rec keeps what the proxies refused this run, and which allow
	// rules let a connection through.
	rec runRecord
	// auditRun is the run in the audit log's start and exit records.
	auditRun violations.RunRecord
	// sigs are the signals for the command, from the moment a step
	// catches them (catchSignals).
	sigs chan os.Signal
	// cmd is the process that holds the sandbox (bubblewrap,
	// sandbox-exec), once start has started it; signal delivers a signal
	// meant for the command, kill ends the sandbox.
	cmd    *exec.Cmd
	signal func(syscall.Signal)
	kill   func()
	// ends undo what the steps made, last first (atEnd).
	ends []func()
}

// newRun is the run of argv under the policy in force.
func (m *Manager) newRun(argv []string, o Options) (*run, error) {
	r := &run{m: m, p: m.Policy(), o: o, argv: argv, sigs: o.Signals}
	if r.sigs == nil {
		r.sigs = make(chan os.Signal, 8)
	}
	r.id, r.text, r.key = o.attribution(argv)
	r.allowed = []policy.HostList{r.p.Network.Allowed}
	if l, ok := m.perCommand(r.key); ok {
		r.allowed = append(r.allowed, l)
	}
	var err error
	if r.token, err = randomHex(16); err != nil { // this run's proxy password
		return nil, err
	}
	return r, nil
}

// atEnd has the run's end call f, before what was handed over earlier.
func (r *run) atEnd(f func()) { r.ends = append(r.ends, f) }

// end undoes what the steps made, last made first.
func (r *run) end() {
	for i := len(r.ends) - 1; i >= 0; i-- {
		r.ends[i]()
	}
}

// catchSignals makes sigs the command's from here on (with
// ForwardSignals): supervise forwards them to it, and they no longer end
// srt. The run's end lets them go.
func (r *run) catchSignals(sigs ...os.Signal) {
	if r.o.ForwardSignals {
		signal.Notify(r.sigs, sigs...)
		r.atEnd(func() { signal.Stop(r.sigs) })
	}
}

// egress is the proxy logic of this run (see Manager.egress), its
// refusals and the rules that allowed a connection recorded in r.rec.
func (r *run) egress() *proxy.Egress {
	return r.m.egress(r.key, r.text, r.token, r.rec.add, r.rec.allow)
}

// noProxy is the command's NO_PROXY: the reference's, less the entries
// that would send directly what the policy or the command's own allow
// list (as they are when it starts) lets it reach through the proxy
// (policy.CommandNoProxy).
func (r *run) noProxy() string {
	v, left := policy.CommandNoProxy(policy.ReferenceNoProxy, r.allowed...)
	if r.o.Log != nil {
		for _, o := range left {
			why := "the proxy reaches it from this host"
			if o.Rule.NamesLoopback() {
				why = "the proxy reaches this host's loopback; a client that ignores the proxy variables reaches the sandbox's own, where nothing of this host listens"
			}
			r.o.Log.Debug("NO_PROXY leaves out "+o.Entry, "allowed", o.Rule.Entry, "by", o.Rule.Origin.Key, "why", why)
		}
	}
	return v
}

// unusedLoopback are the rules of r.allowed that name this host's
// loopback and let no connection through the proxies this run (see
// Result.UnusedLoopback); none where the sandbox reaches this host's
// loopback directly.
func (r *run) unusedLoopback() []policy.HostRule {
	if r.reachesHostLoopback() {
		return nil
	}
	var out []policy.HostRule
	for _, l := range r.allowed {
		for _, rule := range l {
			if rule.NamesLoopback() && !r.rec.allowedBy(rule.Entry) {
				out = append(out, rule)
			}
		}
	}
	return out
}

// A runRecord keeps what the proxies refused one run, and the entries of
// the rules that allowed a connection, for its Result.
type runRecord struct {
	mu      sync.Mutex
	refused []violations.Entry
	allowed map[string]bool
}

func (r *runRecord) allow(rule string) {
	r.mu.Lock()
	if r.allowed == nil {
		r.allowed = map[string]bool{}
	}
	r.allowed[rule] = true
	r.mu.Unlock()
}

func (r *runRecord) allowedBy(rule string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.allowed[rule]
}

func (r *runRecord) add(e violations.Entry) {
	r.mu.Lock()
	r.refused = append(r.refused, e)
	r.mu.Unlock()
}

// entries are the refusals so far (later ones are not added to them).
func (r *runRecord) entries() []violations.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]violations.Entry(nil), r.refused...)
}
