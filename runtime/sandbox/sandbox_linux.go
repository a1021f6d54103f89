//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/private"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/violations"
)

func (o *Options) defaults() error {
	if o.Bwrap == "" {
		path, err := exec.LookPath("bwrap")
		if err != nil {
			return errors.New("bubblewrap (bwrap) is not installed: install it (apt-get install bubblewrap) or set bwrapPath")
		}
		o.Bwrap = path
	}
	return o.hostDefaults()
}

func (o *Options) debug(msg string) {
	if o.Log != nil {
		o.Log.Debug(msg)
	}
}

type childFileSet struct {
	extra   []*os.File // fd 3, 4, 5, 6 in the child (initstep.FD*)
	hostEnd *os.File
	info    *os.File // the read end of bubblewrap's --info-fd
	child   []*os.File
}

func (c *childFileSet) closeChildEnds() {
	for _, f := range c.child {
		f.Close()
	}
}

// childFiles prepares fd 3 (the seccomp program, nil for none), fd 4 (the
// hand-off socket), fd 5 (initProg, the init step's program) and fd 6
// (bubblewrap's --info-fd).
// closeAll closes what the set holds and waits for the writer of the
// program; on failure nothing is left open or running.
func childFiles(prog []byte, initProg string) (_ *childFileSet, _ func(), err error) {
	set := &childFileSet{}
	var written chan struct{}
	closeAll := func() {
		for _, f := range append(set.child, set.hostEnd, set.info) {
			if f != nil {
				f.Close()
			}
		}
		if written != nil {
			// The read end is closed: a write that waits for a reader
			// ends.
			<-written
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	// The seccomp program through a pipe (bwrap reads it to EOF).
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	set.child = append(set.child, r)
	written = make(chan struct{})
	go func() {
		defer close(written)
		w.Write(prog)
		w.Close()
	}()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	set.hostEnd = os.NewFile(uintptr(pair[0]), "srt-handoff-host")
	set.child = append(set.child, os.NewFile(uintptr(pair[1]), "srt-handoff-child"))
	exe, err := os.Open(initProg)
	if err != nil {
		return nil, nil, err
	}
	set.child = append(set.child, exe)
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	set.info = infoR
	set.child = append(set.child, infoW)
	set.extra = append([]*os.File(nil), set.child...)
	return set, closeAll, nil
}

// A handoff is what the init step hands over: the proxies' two
// listening sockets, the master side of the command's terminal (-1 for
// none), and the descriptor of the write watch (-1 for none).
type handoff struct {
	listeners []net.Listener
	master    int
	watch     int
}

// receiveHandoff waits for the init role's two listening sockets and,
// with tty, the master side of the command's terminal, then, with watch,
// the write watch's descriptor: an init step that could not watch (a
// kernel without seccomp user notification) hands over without it.
func receiveHandoff(f *os.File, tty, watch bool) (handoff, error) {
	h := handoff{master: -1, watch: -1}
	want := 2
	if tty {
		want++
	}
	max := want
	if watch {
		max++
	}
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(max*4))
	// Close-on-exec from the start: a bubblewrap another run starts
	// meanwhile must not inherit this sandbox's listeners.
	n, oobn, _, _, err := unix.Recvmsg(int(f.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return h, err
	}
	if n == 0 && oobn == 0 {
		return h, errors.New("the init step ended without handing over")
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return h, fmt.Errorf("bad hand-off message: %v", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != want && len(fds) != max {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return h, fmt.Errorf("bad hand-off rights: %d descriptors, want %d (%v)", len(fds), max, err)
	}
	if tty {
		h.master = fds[2]
	}
	if len(fds) == max && watch {
		h.watch = fds[max-1]
	}
	for i, fd := range fds[:2] {
		lf := os.NewFile(uintptr(fd), "listener-"+strconv.Itoa(i))
		l, err := net.FileListener(lf)
		lf.Close()
		if err != nil {
			for _, l := range h.listeners {
				l.Close()
			}
			for _, fd := range []int{h.master, h.watch} {
				if fd >= 0 {
					unix.Close(fd)
				}
			}
			return handoff{master: -1, watch: -1}, err
		}
		h.listeners = append(h.listeners, l)
	}
	return h, nil
}

// tmpMountPoint makes sure dir exists on the host as a directory, the
// mount point of the run's TMPDIR: bubblewrap cannot create it in the
// read-only root. It stays, empty, for later runs; what the host had
// there is hidden from the command. A symlink or a file there is refused
// rather than followed.
func tmpMountPoint(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.Mkdir(dir, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
			fi, err = os.Lstat(dir)
		}
	}
	if err != nil {
		return fmt.Errorf("the sandbox's TMPDIR is mounted at %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the sandbox's TMPDIR is mounted at %s, which is not a directory on this host (%s): remove it", dir, fi.Mode().Type())
	}
	return nil
}

// removeTmp removes a run's temporary directory that was never
// registered.
func removeTmp(dir string) {
	if dir != "" {
		private.RemoveAll(dir) // what the command wrote: read-only modules too
	}
}

// startReaperAsync starts the reaper and sends its stop function.
func startReaperAsync(self string, reg *placeholders.Registry, record string, out chan<- func(bool), debug func(string)) {
	stop, err := startReaper(self, reg, record)
	if err != nil {
		debug("no reaper: " + err.Error())
		stop = func(bool) {}
	}
	out <- stop
}

// startReaper starts the reaper in a session of its own; stop lets it go
// once the run has cleaned up after itself: with clean, the reaper ends
// without sweeping; without (or when srt dies first, and the pipe closes
// without a word), it sweeps.
func startReaper(self string, reg *placeholders.Registry, record string) (stop func(clean bool), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	// A shell waits (it starts in a fraction of the time srt does); srt is
	// run only when there is something to do. Only srt holds the pipe's
	// other end (close-on-exec): no process of the sandbox can say "clean".
	err = startDetached(`exec <&3 3<&-; while read -r l; do [ "$l" = clean ] && exit 0; done; exec "$0" `+ReapArg+` "$1" "$2" "$3"`, r, self, reg.Dir, record, reg.TmpDir)
	r.Close()
	if err != nil {
		w.Close()
		return nil, err
	}
	return func(clean bool) {
		if clean {
			w.Write([]byte("clean\n"))
		}
		w.Close()
	}, nil
}

// startChecker starts a reaper that sweeps the registry now, doing the
// checks killed runs owe (see Registry.Sweep), in a session of its own.
func startChecker(self string, reg *placeholders.Registry, debug func(string)) {
	if err := startDetached(`exec "$0" `+ReapArg+` "$1" "" "$2"`, nil, self, reg.Dir, reg.TmpDir); err != nil {
		debug("no checker: " + err.Error())
	}
}

// startDetached runs script with /bin/sh, with args as $0, $1, ..., and
// with fd as its descriptor 3 (nil for none), in the background of a
// shell in a session of its own, which ends at once: the script's process
// is no child of this one, nothing here waits for it, and it outlives
// this process, as the reaper must. Its standard input is /dev/null, its
// output goes nowhere.
func startDetached(script string, fd *os.File, args ...string) error {
	cmd := exec.Command("/bin/sh", append([]string{"-c", "{ " + script + "; } &"}, args...)...)
	if fd != nil {
		cmd.ExtraFiles = []*os.File{fd}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	return cmd.Run()
}

// Reap is the reaper (see ReapArg).
func Reap(args []string) error {
	if len(args) != 3 {
		return errors.New("usage: srt " + ReapArg + " DIR RECORD TMPDIR")
	}
	io.Copy(io.Discard, os.Stdin) // until srt is gone
	reg := &placeholders.Registry{Dir: args[0], TmpDir: args[2]}
	reg.WaitEnded(args[1]) // the kernel drops srt's lock a moment later
	_, err := reg.Sweep(true)
	return err
}

// maxQuarantineLines is the most quarantined names a run prints; srt
// quarantine list shows them all.
const maxQuarantineLines = 10

// checkWritten is the check after the run: it moves the protected names
// the command wrote into the quarantine and says so on the command's
// standard error, loudly (they would otherwise run on the host: a git
// hook, a shell start-up file). A check that cannot vouch for everything
// leaves the tree unchecked: srt says what it could not check and what to
// do, the result says it (Result.Unchecked), and no later run starts in
// the tree until srt quarantine check has checked it.
func (r *run) checkWritten() {
	o, res := r.o, r.out
	out := quarantine.CheckAndMove(*r.check, r.snap, r.store, o.checkLimits(), time.Now().Add(placeholders.MoveTime))
	res.Quarantined = out.Items
	for _, it := range out.Items {
		res.Violations = append(res.Violations, violations.Entry{Line: fmt.Sprintf("deny file-write %q (%s; quarantined as %s)", it.Path, it.Why, it.ID), Time: it.Time})
	}
	if len(out.Items) > 0 {
		fmt.Fprintf(o.Stderr, "srt: the sandboxed command wrote protected names, which could run commands on this host; they were moved to %q:\n", r.store.Dir)
		for _, it := range out.Items[:min(len(out.Items), maxQuarantineLines)] {
			where := ""
			if it.InPlace != "" {
				where = fmt.Sprintf(", renamed in place to %q (a directory cannot leave its file system)", it.InPlace)
			}
			fmt.Fprintf(o.Stderr, "srt:   %q (%s%s): srt quarantine release %s\n", it.Path, it.Why, where, it.ID)
		}
		if n := len(out.Items) - maxQuarantineLines; n > 0 {
			fmt.Fprintf(o.Stderr, "srt:   and %d more\n", n)
		}
		fmt.Fprintf(o.Stderr, "srt: review them with \"srt quarantine list\"; put one back with \"srt quarantine release ID\", delete it with \"srt quarantine drop ID\".\n")
	}
	if out.Complete() {
		r.record.Checked(r.treeFile(*r.check))
		return
	}
	res.Unchecked = out.Unchecked
	if err := r.record.Unchecked(out.Unchecked); err != nil {
		// The run's record keeps the check it owes: a reaper does it.
		o.debug("recording the unchecked tree: " + err.Error())
	}
	fmt.Fprint(o.Stderr, UncheckedMessage(r.check.Roots, out.Unchecked))
}

// UncheckedMessage is what srt says when the check after a run could not
// vouch for everything below roots (why): what it could not check, what
// may be there, and what to do.
func UncheckedMessage(roots, why []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "srt: ERROR: the check after the run could not vouch for everything the command could write below %s; it could not check:\n", quotePaths(roots))
	for _, w := range why {
		fmt.Fprintf(&b, "srt:   %s\n", w)
	}
	b.WriteString("srt: a git hook or shell start-up file planted there could run commands on this host: do not run git or a shell there yet. Run \"srt quarantine check\": it checks the tree again, without limits, and moves what it finds; until then no srt run starts there.\n")
	return b.String()
}

// refuseUnchecked refuses a run whose write roots or working directory
// lie in a tree an earlier run left unchecked.
func refuseUnchecked(reg *placeholders.Registry, roots []string, cwd string) error {
	trees, err := reg.UncheckedTrees()
	if err != nil {
		return fmt.Errorf("reading which trees earlier runs left unchecked: %w", err)
	}
	var e UncheckedError
	for _, u := range trees {
		if u.Overlaps(append([]string{cwd}, roots...)...) {
			e.Trees = append(e.Trees, UncheckedTree{Roots: u.Check.Roots, Time: u.Time, Why: u.Why})
		}
	}
	if e.Trees == nil {
		return nil
	}
	return &e
}
