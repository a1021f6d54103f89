//go:build linux

package sandbox

// A sandbox started before its command (Manager.Prepare): bubblewrap
// started, the namespaces, mounts and seccomp program in place, the init
// step waiting, handed over; the command comes with a later Run, which
// uses the sandbox only when it is the one that Run would start now.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/initstep"
	"srt.dev/runtime/resolve"
)

// prepared is the Linux side of a Prepared: the run, from start to hand
// over, that the command's run takes over (adopt).
type prepared struct {
	r *run
	// binds are the identities of the write roots bubblewrap bound from
	// a descriptor (resolve.Result.BindFiles), in their order.
	binds []fileID
	// log is the debug log of the sandbox (its run's Options.Log).
	log *laterLog
}

// laterLog is the debug log of a sandbox prepared before its command: it
// passes what it is told to the log Prepare was given (first, if any),
// and keeps it for the run that adopts the sandbox, whose log then says
// it, and everything after it, as a sandbox started for that run would.
// The sandbox logs messages alone: attributes and groups added to it are
// dropped.
type laterLog struct {
	first   *slog.Logger
	mu      sync.Mutex
	kept    []slog.Record
	adopted bool
	then    *slog.Logger // the adopting run's log (nil: none)
}

func (l *laterLog) Enabled(context.Context, slog.Level) bool { return true }

func (l *laterLog) Handle(ctx context.Context, rec slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	to := l.then
	if !l.adopted {
		l.kept = append(l.kept, rec.Clone())
		to = l.first
	}
	if to != nil && to.Handler().Enabled(ctx, rec.Level) {
		return to.Handler().Handle(ctx, rec)
	}
	return nil
}

func (l *laterLog) WithAttrs([]slog.Attr) slog.Handler { return l }

func (l *laterLog) WithGroup(string) slog.Handler { return l }

// adopt has the log of the run that adopts the sandbox (to, nil for
// none) say what the sandbox's log kept, and what it is told from now on.
func (l *laterLog) adopt(to *slog.Logger) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.adopted, l.then = true, to
	if to != nil {
		for _, rec := range l.kept {
			if to.Handler().Enabled(context.Background(), rec.Level) {
				to.Handler().Handle(context.Background(), rec)
			}
		}
	}
	l.kept = nil
}

// fileID is a file's identity on this host.
type fileID struct{ dev, ino uint64 }

func prepare(ctx context.Context, m *Manager, o Options) (*Prepared, error) {
	if o.DryRun {
		return nil, errors.New("a dry run starts no sandbox")
	}
	if err := o.defaults(); err != nil {
		return nil, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer null.Close()
	// What the preparation logs is the command's to read too (laterLog).
	log := &laterLog{first: o.Log}
	o.Log = slog.New(log)
	// bubblewrap's and the init step's own messages go to o.Stderr; the
	// command gets its descriptors with its start message.
	o.Stdin, o.Stdout, o.ForwardSignals = null, null, false
	r, err := m.newRun(nil, o)
	if err != nil {
		return nil, err
	}
	r.later = true
	ok := false
	defer func() {
		if !ok {
			r.end()
		}
	}()
	if err := r.prepare(); err != nil {
		return nil, err
	}
	switch {
	case r.tls != nil:
		return nil, errors.New("the settings terminate TLS (network.tlsTerminate): each run makes its own trust bundle")
	case r.masks.Injector() != nil || r.maskDir != "":
		return nil, errors.New("the settings mask credentials: each run reads their real values from its own environment")
	}
	p := &prepared{r: r, log: log}
	for _, f := range r.res.BindFiles {
		id, err := identity(f)
		if err != nil {
			return nil, err
		}
		p.binds = append(p.binds, id)
	}
	r.out.secrets = append(r.out.secrets, r.token)
	if err := r.start(ctx); err != nil {
		return nil, err
	}
	r.wait()
	if r.herr != nil {
		r.kill()
		<-r.exited
		return nil, fmt.Errorf("the sandbox did not start: %w", r.herr)
	}
	ok = true
	return &Prepared{p: p}, nil
}

func identity(f *os.File) (fileID, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fileID{}, err
	}
	return fileID{uint64(st.Dev), st.Ino}, nil
}

// close ends a prepared sandbox no command used.
func (p *prepared) close() {
	r := p.r
	r.kill()
	<-r.exited
	r.closeHandoff()
	// No command ran: no check is owed (whatever was recorded of the
	// write roots), and the scratch space goes now.
	if r.check != nil {
		r.record.Checked("")
	}
	r.end()
}

// adopt makes the prepared sandbox p this run's, when it is the sandbox
// this run would start now; otherwise it ends p and says why. recorded
// is the record of p's write roots (recordRoots), made while the plan is
// resolved again: adopt waits for it, and its error is the run's.
func (r *run) adopt(p *prepared, recorded <-chan error) (why string, rerr error) {
	cmdEnv, res, why := r.fits(p)
	if res != nil {
		res.Close()
	}
	if why == "" && len(res.Lines) != len(res.Args) {
		why = "the resolution gave no line for each argument"
	}
	rerr = <-recorded
	if why != "" {
		p.close()
		return why, nil
	}
	pr := p.r
	command, err := initstep.EncodeCommand(r.argv, cmdEnv)
	if err != nil {
		p.close()
		return err.Error(), nil
	}
	stdio := []*os.File{r.o.Stdin.(*os.File), r.o.Stdout.(*os.File), r.o.Stderr.(*os.File)}
	r.osRun = pr.osRun
	r.ends = append(pr.ends, r.ends...)
	r.cmd, r.signal, r.kill = pr.cmd, pr.signal, pr.kill
	// The reader of the second layer's refusals is this run's from here
	// on: its command's start message asks the init step to have them
	// logged, and its end reports them and stops the reader.
	pr.llOpened = nil
	r.atEnd(r.closeLandlockAudit)
	r.env, r.command, r.stdio = cmdEnv, command, stdio
	// The command line as the sandbox has it, with the environment as
	// the command gets it: this resolution's, then what the runtime added
	// after it, then the command.
	out := *pr.out
	tail := 1 + pr.resolved
	out.Argv = slices.Concat(out.Argv[:1], res.Args, out.Argv[tail:], r.argv)
	out.ArgvLines = slices.Concat(out.ArgvLines[:1], res.Lines, out.ArgvLines[tail:], make([]int, len(r.argv)))
	out.secrets = append(slices.Clip(out.secrets), r.token)
	r.out = &out
	r.o.Stderr.Write(pr.said.Bytes())
	p.log.adopt(r.o.Log)
	for _, w := range res.Warnings {
		fmt.Fprintf(r.o.Stderr, "srt: warning: %s\n", w)
	}
	for _, w := range r.limits.warnings {
		fmt.Fprintf(r.o.Stderr, "srt: warning: %s\n", w)
	}
	r.catchSignals(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	return "", rerr
}

// usePrepared takes the prepared sandbox p for this run's command, when
// it fits (adopt), and lets the command start in it. What the write
// roots hold is recorded while the plan is resolved again: the
// resolution compares the write roots with those of p, whose record it
// is, and a sandbox that does not fit ends with no check owed.
func (r *run) usePrepared(ctx context.Context, p *Prepared) bool {
	s := p.take()
	if s == nil {
		return false
	}
	s.r.o.Step = r.o.Step // the steps timed are this run's
	why, rerr := r.adopt(s, s.r.recordRoots())
	if why != "" {
		r.o.debug("warm start: the prepared sandbox is not used: " + why)
		return false
	}
	r.o.debug("warm start: the command runs in the prepared sandbox")
	recorded := make(chan error, 1)
	recorded <- rerr
	r.launch(ctx, recorded)
	return true
}

// wait says when bubblewrap has ended.
func (r *run) wait() <-chan error {
	if r.exited == nil {
		r.exited = make(chan error, 1)
		go func() { r.exited <- r.cmd.Wait() }()
	}
	return r.exited
}

// fits resolves the plan again for this run's command, on the host as it
// is now, and says why the prepared sandbox is not the one that
// resolution asks for ("" when it is): the same policy and options, the
// same bubblewrap arguments but the environment (which the command gets
// with its start message: cmdEnv), the same write roots bound, and a
// sandbox still waiting. The caller closes res.
func (r *run) fits(p *prepared) (cmdEnv []string, res *resolve.Result, why string) {
	pr := p.r
	o, po := r.o, pr.o
	switch {
	case r.p != pr.p:
		return nil, nil, "the policy is not the one it was prepared with"
	case o.Bwrap != po.Bwrap || o.Home != po.Home || o.Cwd != po.Cwd:
		return nil, nil, "another bubblewrap, home or working directory"
	case !slices.Equal(o.Env, po.Env):
		return nil, nil, "another environment"
	case !reflect.DeepEqual(o.State, po.State) || !reflect.DeepEqual(o.CheckLimits, po.CheckLimits) || o.LinuxPlan != po.LinuxPlan || o.NoWriteWatch != po.NoWriteWatch:
		return nil, nil, "other options"
	}
	for _, f := range []any{o.Stdin, o.Stdout, o.Stderr} {
		if _, ok := f.(*os.File); !ok {
			return nil, nil, "a standard stream that is not a file"
		}
	}
	if newHostTerminal(o.Stdin, o.Stdout, o.Stderr) != nil {
		return nil, nil, "a terminal (the sandbox would need one of its own)"
	}
	select {
	case <-pr.exited:
		pr.exited <- errors.New("ended") // for close
		return nil, nil, "the sandbox ended while it waited"
	default:
	}
	if err := refuseUnchecked(pr.reg, pr.res.WriteRoots, o.Cwd); err != nil {
		return nil, nil, err.Error()
	}
	env := proxyEnv(r.token, r.key, pr.self, r.noProxy(), HTTPPort, SOCKSPort)
	// The placeholders bubblewrap made for this sandbox are absent to the
	// resolution, as they were when it was prepared.
	h := pr.host(env)
	h.Placeholders = pr.res.Placeholders
	res, err := resolve.Resolve(pr.steps, h)
	if err != nil {
		return nil, nil, err.Error()
	}
	switch {
	case !slices.Equal(res.Placeholders, pr.res.Placeholders):
		return nil, res, "the host changed since it was prepared: other placeholders"
	case !slices.Equal(withoutEnv(res.Args), withoutEnv(pr.res.Args[:pr.resolved])):
		return nil, res, "the host changed since it was prepared: the plan resolves to other mounts (" + firstDiff(withoutEnv(pr.res.Args[:pr.resolved]), withoutEnv(res.Args)) + ")"
	case !reflect.DeepEqual(res.Landlock, pr.res.Landlock) || !reflect.DeepEqual(res.Limits, pr.res.Limits) ||
		!slices.Equal(res.WriteRoots, pr.res.WriteRoots) || !slices.Equal(res.Watch, pr.res.Watch) || !slices.Equal(res.GitWatch, pr.res.GitWatch):
		return nil, res, "the host changed since it was prepared: other write roots or files to watch"
	case len(res.BindFiles) != len(p.binds):
		return nil, res, "the host changed since it was prepared: other write roots"
	}
	for i, f := range res.BindFiles {
		if id, err := identity(f); err != nil || id != p.binds[i] {
			return nil, res, "the host changed since it was prepared: a write root is another directory"
		}
	}
	return applyEnv(pr.env, res.Args), res, ""
}

// firstDiff says where two argument lists first differ.
func firstDiff(was, now []string) string {
	for i := range max(len(was), len(now)) {
		a, b := "(none)", "(none)"
		if i < len(was) {
			a = was[i]
		}
		if i < len(now) {
			b = now[i]
		}
		if a != b {
			return fmt.Sprintf("argument %d was %q, is %q", i+1, a, b)
		}
	}
	return "no difference"
}

// withoutEnv are bubblewrap's arguments without those that set the
// environment.
func withoutEnv(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--setenv" && i+2 < len(args):
			i += 2
		case args[i] == "--unsetenv" && i+1 < len(args):
			i++
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// applyEnv is env as bubblewrap leaves it to the command after the
// --setenv and --unsetenv of args, in their order.
func applyEnv(env, args []string) []string {
	env = slices.Clone(env)
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--setenv" && i+2 < len(args):
			env = setEnv(env, args[i+1], args[i+2])
			i += 2
		case args[i] == "--unsetenv" && i+1 < len(args):
			env = unsetEnv(env, args[i+1])
			i++
		}
	}
	return env
}

// sendStart sends the start message: the byte that lets the command of
// the init step's arguments start, or, for a sandbox prepared before its
// command, the command, its environment and its standard descriptors.
func (r *run) sendStart() error {
	msg := r.ll.startMessage()
	if !r.later {
		_, err := r.hostEnd.Write(msg)
		return err
	}
	fds := make([]int, len(r.stdio))
	for i, f := range r.stdio {
		fds[i] = int(f.Fd())
	}
	head := initstep.CommandHeader(string(msg[1:]), r.command)
	if err := unix.Sendmsg(int(r.hostEnd.Fd()), head, unix.UnixRights(fds...), nil, 0); err != nil {
		return err
	}
	for b := r.command; len(b) > 0; {
		n := min(len(b), 32<<10)
		if _, err := r.hostEnd.Write(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}
