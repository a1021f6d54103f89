//go:build linux

package sandbox

// The Linux steps of a run from bubblewrap's start on (see run.go): the
// reaper, cgroups and bubblewrap started, the proxies served on the
// listeners the sandbox hands over, the command let go, and what the run
// finds after it.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy"
	"srt.dev/runtime/quarantine"
)

// start registers the run's scratch space with the reaper, starts
// bubblewrap, and hands over: the proxies serve the listeners the sandbox
// hands over, and the command starts.
func (r *run) start(ctx context.Context) error {
	o := r.o
	launchReaper, reaped, err := r.register()
	if err != nil {
		return err
	}
	r.atEnd(func() {
		pending, err := r.record.Release()
		// The reaper has nothing left to do when the run cleaned up after
		// itself and no check is owed.
		reaped(err == nil && !pending)
		o.step("released")
	})
	o.step("registered")

	// The run's cgroups are recorded before they are made: the reaper
	// removes them however the run ends.
	cg := r.limits.cg
	if cg.any() {
		if err := r.record.Cgroups(cg.dirs()); err != nil {
			return err
		}
	}
	if err := cg.make(r.limits.limits); err != nil {
		cg.remove()
		return err
	}
	r.atEnd(func() {
		if err := cg.remove(); err != nil {
			o.debug("limits: " + err.Error())
		}
	})

	files, closeAll, err := childFiles(r.prog, r.init())
	if err != nil {
		return err
	}
	r.atEnd(closeAll)
	r.openLandlockAudit()
	r.atEnd(r.closeLandlockAudit)
	r.cmd = r.bubblewrap(files)
	if r.tty != nil {
		r.atEnd(r.tty.finish)
		if err := r.tty.makeRaw(); err != nil {
			return err
		}
	}
	if err := r.cmd.Start(); err != nil {
		return fmt.Errorf("starting bubblewrap: %w", err)
	}
	o.step("bubblewrap started")
	// The reaper starts once bubblewrap has (two processes started at
	// once take turns: Go starts one at a time).
	launchReaper()
	files.closeChildEnds()
	r.res.Close()
	r.handOver(ctx, files, cg)
	return nil
}

// handOver serves the proxies on the listeners the sandbox's init step
// hands over, and lets the command start once its terminal, its cgroups,
// the record of its write roots and the reader of its second layer's
// refusals are ready; herr says why it did not. It leaves what
// supervise needs (signal, kill) and what watches the command. A
// sandbox prepared before its command (later) stops once handed over:
// launch lets its command start.
func (r *run) handOver(ctx context.Context, files *childFileSet, cg *cgroupSet) {
	// The sandbox's first process (our init role, PID 1 inside) as the
	// host sees it, once bubblewrap names it: signals for the command go
	// to it, and it forwards them. The run's end stops its reader (what
	// bubblewrap says comes as it starts) and waits for it.
	init := &target{}
	cgPID, llPID := make(chan int, 1), make(chan int, 1)
	infoRead := make(chan struct{})
	go func() {
		defer close(infoRead)
		var info struct {
			ChildPID int `json:"child-pid"`
		}
		json.NewDecoder(files.info).Decode(&info)
		init.set(info.ChildPID)
		cgPID <- info.ChildPID
		llPID <- info.ChildPID
	}()
	r.atEnd(func() {
		files.info.Close()
		<-infoRead
	})
	// The sandbox enters its cgroups before the command starts, and the
	// threads that may make its second layer are listed, for the run
	// whose command starts: a sandbox prepared before its command is
	// another run's by then (adopt).
	r.ready = func(r *run) error {
		r.expectLandlock(llPID)
		if cg == nil || len(cg.made) == 0 {
			return nil
		}
		pid := <-cgPID
		if pid <= 0 {
			return errors.New("bubblewrap did not name the sandbox's first process, which its cgroups need")
		}
		return cg.join(pid)
	}
	r.cg, r.hostEnd = cg, files.hostEnd
	r.signal = init.signal
	r.kill = func() {
		r.cmd.Process.Kill() // bubblewrap; the sandbox dies with it
		init.kill()          // PID 1 of its namespace: all of it
	}
	if r.later {
		r.herr = r.receive()
		return
	}
	// What the write roots hold is recorded while bubblewrap starts; the
	// command starts once it is on disk (see launch).
	recorded := r.recordRoots()
	r.herr = r.receive()
	r.launch(ctx, recorded)
}

// recordRoots records what the write roots hold (snapshot), off the caller's
// way; the channel says when it is on disk.
func (r *run) recordRoots() <-chan error {
	recorded := make(chan error, 1)
	if r.check == nil {
		recorded <- nil
		return recorded
	}
	go func() {
		err := r.snapshot(*r.check)
		r.o.step("recorded")
		recorded <- err
	}()
	return recorded
}

// receive waits for what the init step hands over (the listeners, the
// terminal's master side, the write watch), and serves the write watch.
func (r *run) receive() error {
	h, herr := receiveHandoff(r.hostEnd, r.tty != nil, r.watchWrites)
	r.handoff = h
	r.o.step("handed over")
	r.atEnd(func() { r.ww.stop() })
	if herr == nil && r.watchWrites {
		if h.watch < 0 {
			r.o.debug("refused writes are not reported: the init step could not watch them (this kernel has no seccomp user notification)")
		} else if r.ww, herr = newWriteWatch(h.watch); herr != nil {
			herr = fmt.Errorf("watching the command's writes: %w", herr)
		}
	}
	if herr != nil {
		r.closeHandoff()
	}
	return herr
}

// closeHandoff closes the listeners and the hand-off socket of a sandbox
// whose command will not start: without the start message, its init
// step ends as the socket closes.
func (r *run) closeHandoff() {
	for _, l := range r.handoff.listeners {
		l.Close()
	}
	r.handoff.listeners = nil
	r.hostEnd.Close()
}

// launch lets the command start once the write roots are recorded, and
// serves the proxies for it: see serve. It leaves what watches the
// command.
func (r *run) launch(ctx context.Context, recorded <-chan error) {
	if r.herr != nil {
		<-recorded
	} else {
		var stop func()
		stop, r.herr = r.serve(ctx, recorded)
		// The proxies stop before the check after the run (finish), and
		// at the latest when the run ends.
		r.stopProxies = sync.OnceFunc(stop)
		r.atEnd(r.stopProxies)
	}
	r.stopResize = r.tty.followSize()
	r.cpuHit, r.stopWatch = r.watchCPU(r.cg, r.herr == nil, r.kill)
}

// stopWatching stops what watched the command (its CPU time, the
// terminal's size) once the sandbox has ended, and gives the outer
// terminal back.
func (r *run) stopWatching() {
	r.stopWatch()
	r.stopResize()
	r.o.step("command ended")
	if r.tty != nil {
		r.tty.finish()
	}
}

// finish stops the proxies, moves the protected names the command wrote
// to the quarantine (a check that cannot vouch for everything leaves the
// tree unchecked: Result.Unchecked), and reports the resource limits the
// sandbox reached and the writes the second layer refused; its error says
// why the sandbox did not start the command, when it did not.
func (r *run) finish() error {
	o, out := r.o, r.out
	if r.stopProxies != nil {
		// No connection of the sandbox's outlives it into the check: none
		// holds a descriptor the walk needs, none writes meanwhile.
		r.stopProxies()
	}
	if r.check != nil && r.snap != nil {
		r.checkWritten()
		o.step("checked")
	}
	r.reportLimits()
	r.reportWrites()
	r.reportLandlock()
	if r.herr != nil && (out.ExitCode == 0 || r.snap == nil && r.check != nil) {
		return fmt.Errorf("the sandbox did not start the command: %w", r.herr)
	}
	return nil
}

// serve lets the command start and serves the proxies on the listeners
// the init step handed over, recording decisions in r.rec: the terminal
// attached, the write roots recorded, the cgroups joined, it sends the
// start message (with the command, for a sandbox prepared before it)
// and closes the hand-off socket. herr says why the command did not
// start. stop closes the listeners and every connection of the run's
// proxies, and returns once they are all gone.
func (r *run) serve(ctx context.Context, recorded <-chan error) (stop func(), herr error) {
	egress := r.egress()
	if r.tls != nil {
		egress.TLS = r.tls.Terminator
	}
	if inject := r.masks.Injector(); inject != nil {
		// credentials.sigv4 follows policy updates from the next request.
		inject.SigV4 = func() proxy.SigV4Policy { return *r.m.sigv4.Load() }
		egress.Inject = inject
	}
	// The command starts once its terminal is set up and the write roots
	// are recorded (without the start message, the init step ends when
	// the socket closes, below).
	if r.tty != nil {
		herr = r.tty.attach(r.handoff.master)
	}
	if err := <-recorded; herr == nil && err != nil {
		herr = fmt.Errorf("recording the write roots for the check after the run: %w (the command must not run unchecked)", err)
	}
	if herr == nil {
		herr = r.ready(r)
	}
	if herr == nil {
		herr = r.sendStart()
		r.o.step("command started")
	}
	if herr != nil {
		r.closeHandoff()
		return func() {}, herr
	}
	r.hostEnd.Close()
	for _, n := range externalNote(r.p.Network) {
		r.o.debug(n)
	}
	listeners := r.handoff.listeners
	return serveProxies(ctx, egress, r.p.Network, listeners[0], listeners[1], r.o.Log), nil
}

// register records the run's placeholders and scratch space, and the
// write roots to check for protected names, in the registry. launch
// starts the reaper: a watcher outside the sandbox that sweeps the
// registry when srt is gone, however it goes (SIGKILL included). It waits
// for the end of a pipe only srt holds open, then for this run's lock; it
// starts once bubblewrap has, off the critical path, and until it runs
// the sweep at the next start is the fallback. reaped lets it go once it
// has started; clean (the run released everything, and no check is owed)
// lets it end without starting srt to sweep.
func (r *run) register() (launch func(), reaped func(clean bool), err error) {
	var scratch []string
	if len(r.res.Placeholders) > 0 {
		scratch = append(scratch, r.empty)
	} else {
		os.RemoveAll(r.empty) // srt's own: the sandbox has not started
	}
	for _, d := range []string{r.tmp, r.tlsDir, r.maskDir} {
		if d != "" {
			scratch = append(scratch, d)
		}
	}
	storeDir := ""
	var check *quarantine.Spec
	if fs := r.p.Filesystem; fs.MandatoryScan != nil && !fs.Disabled || len(r.res.Watch) > 0 || len(r.res.GitWatch) > 0 {
		check = &quarantine.Spec{Watch: r.res.Watch, GitWatch: r.res.GitWatch, Home: r.o.Home, GitConfig: true}
		if fs.MandatoryScan != nil && !fs.Disabled {
			check.Roots, check.GitConfig = r.res.WriteRoots, fs.MandatoryScan.GitConfig
		}
		storeDir = r.store.Dir
	}
	r.check = check
	if err = r.record.Set(r.res.Placeholders, check, storeDir, scratch...); err != nil {
		r.discard()
		return nil, nil, err
	}
	// Nothing to clean up or check after this run: no reaper.
	need := scratch != nil || check != nil || r.limits.cg.any()
	reaper := make(chan func(bool), 1)
	launched := false
	launch = func() {
		if need {
			launched = true
			go startReaperAsync(r.self, r.reg, r.record.Record(), reaper, r.o.debug)
		}
	}
	return launch, func(clean bool) {
		if launched {
			(<-reaper)(clean)
		}
	}, nil
}

// bubblewrap is the command that starts the sandbox.
func (r *run) bubblewrap(files *childFileSet) *exec.Cmd {
	o := r.o
	cmd := exec.Command(o.Bwrap, r.out.Argv[1:]...)
	// Removed variables are gone and masked ones are stand-ins already in
	// what bubblewrap gets: no process of the run holds a real value.
	cmd.Env = r.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.Stdin, o.Stdout, o.Stderr
	if r.tty != nil {
		// bubblewrap gets no descriptor of the outer terminal: the command
		// uses the sandbox's own, and what bubblewrap or the init step
		// say goes through a pipe. (bubblewrap would also bind a terminal
		// on its stdout to /dev/console inside.)
		for _, fd := range r.tty.fds {
			switch fd {
			case 0:
				cmd.Stdin = nil
			case 1:
				cmd.Stdout = struct{ io.Writer }{o.Stdout}
			case 2:
				cmd.Stderr = struct{ io.Writer }{o.Stderr}
			}
		}
		cmd.WaitDelay = 2 * time.Second
	}
	cmd.ExtraFiles = append(files.extra, r.res.BindFiles...) // FDBind and up
	// bubblewrap dies with srt (Pdeathsig), and lives in its own process
	// group, so that a terminal's ^C reaches srt, which forwards it to the
	// command, rather than killing bubblewrap and the sandbox with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// snapshot records what the write roots hold before the command starts,
// with the run (a reaper checks a killed run against it), starting from
// what the last check of the same roots saw.
func (r *run) snapshot(spec quarantine.Spec) error {
	cache, _ := quarantine.ReadSnapshot(r.treeFile(spec))
	s, notes := quarantine.Snap(spec, cache, r.o.checkLimits())
	if len(notes) > 0 {
		return fmt.Errorf("the check after the run could not vouch for what the command may write: %s. Leave such places out of the write roots, make what srt cannot list readable, or raise the walk's limits (SRT_CHECK_ENTRIES, SRT_CHECK_SECONDS)", strings.Join(notes, "; "))
	}
	if err := r.record.Snapshot(s); err != nil {
		return err
	}
	r.snap = s
	return nil
}

// treeFile is where the last check of spec's roots is kept.
func (r *run) treeFile(spec quarantine.Spec) string {
	h := sha256.New()
	for _, root := range spec.Roots {
		fmt.Fprintf(h, "%s\x00", root)
	}
	fmt.Fprintf(h, "\x00%s", spec.Home)
	return filepath.Join(r.reg.TreeCache(), hex.EncodeToString(h.Sum(nil)[:16]))
}

// watchCPU stops the sandbox (kill) once its cgroup has used the CPU time
// of limits.cpuSeconds, when the run has such a cgroup and its command
// started; hit says whether it did, once stop has been called.
func (r *run) watchCPU(cg *cgroupSet, started bool, kill func()) (hit func() bool, stop func()) {
	var limit int64
	for _, l := range r.limits.limits {
		if l.Kind == policy.LimitCPU {
			limit = l.Value
		}
	}
	if limit == 0 || !cg.has("cpu") || !started {
		return func() bool { return false }, func() {}
	}
	h, stop := cg.watchCPU(time.Duration(limit)*time.Second, kill)
	return func() bool {
		select {
		case <-h:
			return true
		default:
			return false
		}
	}, stop
}

// reportLimits says which resource limits the sandbox reached: on the
// command's standard error, in the result, and as violations.
func (r *run) reportLimits() {
	out := r.out
	now := time.Now()
	for _, h := range r.limits.hits(r.cpuHit(), out.ExitCode) {
		fmt.Fprintf(r.o.Stderr, "srt: the sandbox reached %s = %d%s: %s\n", h.Key, h.Value, limitUnit(h.Kind), h.What)
		out.Limits = append(out.Limits, h)
		e := h.violation(now)
		if kept, ok := r.m.store.Add(e.Line, r.key, e.Time); ok {
			out.Violations = append(out.Violations, kept)
		}
	}
}
