//go:build linux

package sandbox

// Reporting the writes the second layer refused (docs/layers.md). Since
// Linux 6.15 (Landlock ABI 7) Landlock logs its refusals to the kernel's
// audit: an AUDIT_LANDLOCK_ACCESS record per refused request, naming the
// domain that refused it, then, with the first one, an
// AUDIT_LANDLOCK_DOMAIN record naming the thread that made the domain. A
// process with CAP_AUDIT_READ reads them from the NETLINK_AUDIT multicast
// group, without auditd, while the kernel's audit is on.
//
// srt never turns the audit on (it is host-wide; see docs/layers.md). When
// it is on and srt may read it, the init step names its thread with a
// token of this run before it makes the domain and asks the kernel to log
// the command's refusals (LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON: by
// default a domain's refusals are logged only until the next execve). A
// domain is this run's when its creator is a thread of the sandbox's
// first process, listed before the command starts, and had that name;
// refusals of any other domain (another run, a domain the command made
// itself) are never reported.

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
	"srt.dev/internal/kaudit"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/violations"
)

// landlockReportNote is srt doctor's word on whether srt reports the
// writes the second layer refuses.
func landlockReportNote(abi int) string {
	if abi < 7 {
		return "srt cannot report the writes this layer refuses: the kernel logs them from Landlock ABI 7 (Linux 6.15)"
	}
	st, err := kaudit.Get()
	switch {
	case err != nil:
		return "srt does not report the writes this layer refuses: reading the kernel's audit takes root on the host (docs/layers.md)"
	case st.Enabled == 0:
		return "srt does not report the writes this layer refuses: the kernel's audit is off (auditctl -e 1 turns it on, for the whole host: see docs/layers.md first)"
	case st.Failure == kaudit.FailPanic:
		return "srt does not report the writes this layer refuses: the kernel's audit panics when it loses a record (auditctl -f 2)"
	}
	return "srt reports the writes this layer refuses (--violations, the audit log): the kernel's audit is on and srt may read it"
}

// maxLandlockDenials bounds what one run keeps: as many as the violation
// store holds; more are counted, not listed.
const maxLandlockDenials = violations.Keep

// A landlockAudit reads the kernel's audit for the refusals of one run's
// second layer.
type landlockAudit struct {
	f  *os.File // the multicast socket, non-blocking
	fd int
	// token is what the init step names its thread when it makes the
	// domain: 15 characters, the most a thread's name holds.
	token   string
	done    chan struct{}
	closing sync.Once

	mu sync.Mutex
	// tids are the threads of the sandbox's first process before the
	// command started; nil until then.
	tids    map[int]bool
	domain  string
	pending []violations.LandlockDenial // of unknown domains, latest events
	seen    map[string]bool             // a line per path and rights
	denials []violations.LandlockDenial
	logged  uint64 // this domain's refusals read, repeats included
	// lostAtStart is the kernel's count of lost records when reading
	// began; overflow says srt's socket overflowed.
	lostAtStart uint32
	overflow    bool
}

// openLandlockAudit subscribes to the audit records when this run can
// report the second layer's refusals: a kernel with Landlock ABI 7, the
// audit on, and the capabilities to ask and read. Otherwise it says why
// not, for the debug log.
func openLandlockAudit(abi int) (*landlockAudit, string) {
	if abi < 7 {
		return nil, "landlock: refusals are not reported: the kernel logs them from Landlock ABI 7 (Linux 6.15)"
	}
	st, err := kaudit.Get()
	switch {
	case err != nil:
		return nil, "landlock: refusals are not reported: the kernel's audit is not readable here (" + err.Error() + "; it takes root on the host: CAP_AUDIT_CONTROL, CAP_AUDIT_READ, the host's PID namespace)"
	case st.Enabled == 0:
		return nil, "landlock: refusals are not reported: the kernel's audit is off (auditctl -e 1 turns it on, for the whole host; see docs/layers.md)"
	case st.Failure == kaudit.FailPanic:
		return nil, "landlock: refusals are not reported: the kernel's audit panics when it loses a record (auditctl -f 2), and the command could make it lose some"
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_AUDIT)
	if err != nil {
		return nil, "landlock: refusals are not reported: " + err.Error()
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: 1 << (unix.AUDIT_NLGRP_READLOG - 1)}); err != nil {
		unix.Close(fd)
		return nil, "landlock: refusals are not reported: reading the kernel's audit takes CAP_AUDIT_READ (" + err.Error() + ")"
	}
	// Room for a burst of records while this process is busy.
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20)
	token, err := randomHex(8)
	if err != nil {
		unix.Close(fd)
		return nil, "landlock: " + err.Error()
	}
	a := &landlockAudit{f: os.NewFile(uintptr(fd), "audit"), fd: fd, token: token[:15], done: make(chan struct{}),
		lostAtStart: st.Lost, seen: map[string]bool{}}
	go a.read()
	return a, ""
}

// expect records the threads of the sandbox's first process, pid: one of
// them makes the domain once the command may start (the init step keeps
// to one thread from its start on).
func (a *landlockAudit) expect(pid int) error {
	if pid <= 0 {
		return errors.New("bubblewrap did not name the sandbox's first process")
	}
	entries, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return err
	}
	tids := map[int]bool{}
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			tids[n] = true
		}
	}
	a.mu.Lock()
	a.tids = tids
	a.mu.Unlock()
	return nil
}

// read takes the records until the socket is closed or its deadline
// passes, then what is left in it.
func (a *landlockAudit) read() {
	defer close(a.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := a.f.Read(buf)
		if err != nil {
			if errors.Is(err, unix.ENOBUFS) {
				a.mu.Lock()
				a.overflow = true
				a.mu.Unlock()
				continue
			}
			break
		}
		a.take(buf[:n])
	}
	// What is left, not what other processes keep making.
	for range maxDrain {
		n, _, err := unix.Recvfrom(a.fd, buf, unix.MSG_DONTWAIT)
		if err != nil && !errors.Is(err, unix.ENOBUFS) {
			return
		}
		if err == nil {
			a.take(buf[:n])
		}
	}
}

// maxDrain bounds the records read once reading stops.
const maxDrain = 4096

// take handles one datagram of records.
func (a *landlockAudit) take(b []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for t, data := range kaudit.Messages(b) {
		if t != violations.AuditLandlockAccess && t != violations.AuditLandlockDomain {
			continue
		}
		r, ok := violations.ParseAuditRecord(t, string(data))
		if !ok {
			continue
		}
		if d, ok := violations.LandlockAccess(r); ok {
			a.access(d)
		} else if d, ok := violations.LandlockDomainRecord(r); ok {
			a.domainRecord(d)
		}
	}
}

// maxPending bounds the refusals of unknown domains kept until their
// domain's record (which follows the first one, in the same event).
const maxPending = 64

func (a *landlockAudit) access(d violations.LandlockDenial) {
	switch {
	case a.domain != "":
		if d.Domain == a.domain {
			a.keep(d)
		}
	case a.tids != nil:
		if len(a.pending) == maxPending {
			a.pending = a.pending[1:]
		}
		a.pending = append(a.pending, d)
	}
}

func (a *landlockAudit) domainRecord(d violations.LandlockDomain) {
	if !d.Allocated || a.domain != "" || a.tids == nil || !a.tids[d.PID] || d.Comm != a.token {
		return
	}
	a.domain = d.ID
	for _, p := range a.pending {
		if p.Domain == d.ID {
			a.keep(p)
		}
	}
	a.pending = nil
}

// keep records a refusal of this run's domain, once per path and the
// rights refused there.
func (a *landlockAudit) keep(d violations.LandlockDenial) {
	a.logged++
	k := strings.Join(d.Blockers, ",") + "\x00" + d.Path
	if a.seen[k] || len(a.denials) == maxLandlockDenials {
		return
	}
	a.seen[k] = true
	a.denials = append(a.denials, d)
}

// finish waits until the records of the ended sandbox have been read,
// within a bound, and stops reading. The kernel queues a refusal's
// records while the command makes the request, before it ends, and hands
// them to the group in order: once its queue is empty, they are in srt's
// socket. lost is how many records the kernel lost meanwhile (its queue
// or rate limit was full), any process's: some of them may have been
// this run's; overflow says srt's socket overflowed.
func (a *landlockAudit) finish() (denials []violations.LandlockDenial, logged uint64, lost uint32, overflow bool) {
	var st kaudit.Status
	var err error
	for end := time.Now().Add(200 * time.Millisecond); ; time.Sleep(time.Millisecond) {
		if st, err = kaudit.Get(); err != nil || st.Backlog == 0 || time.Now().After(end) {
			break
		}
	}
	a.close()
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil && st.Lost > a.lostAtStart {
		lost = st.Lost - a.lostAtStart
	}
	return a.denials, a.logged, lost, a.overflow
}

// close stops reading and closes the socket; a second call does nothing.
func (a *landlockAudit) close() {
	if a == nil {
		return
	}
	a.closing.Do(func() {
		a.f.SetReadDeadline(time.Now())
		<-a.done
		a.f.Close()
	})
}

// startMessage is what the host writes to let the command start: one
// byte, then the token when the init step is to name its thread with it
// and have the command's refusals logged.
func (a *landlockAudit) startMessage() []byte {
	if a == nil {
		return []byte{1}
	}
	return append([]byte{1}, a.token...)
}

// openLandlockAudit starts reading the kernel's audit for this run, when
// its plan has the second layer and this host lets srt report its
// refusals, off the run's way: joining the audit's group makes the kernel
// log a record, which waits while the kernel's queue is full (a host
// without auditd prints every record to its console). The debug log says
// why not, when it does not.
func (r *run) openLandlockAudit() {
	abi := initstep.ABI()
	if r.res.Landlock == nil || abi <= 0 {
		return
	}
	// The channel, not the field: a run that adopts a prepared sandbox
	// takes the channel over (adopt) and the field of the run that
	// prepared it is cleared, maybe before the reader is open.
	opened := make(chan *landlockAudit, 1)
	r.llOpened = opened
	log := r.o.Log
	go func() {
		a, why := openLandlockAudit(abi)
		if landlockOpenDelay > 0 {
			time.Sleep(landlockOpenDelay)
		}
		if why != "" && log != nil {
			log.Debug(why)
		}
		opened <- a
	}()
}

// landlockOpenDelay holds back the reader's opening; tests set it to
// adopt a prepared sandbox before its reader is open.
var landlockOpenDelay time.Duration

// expectLandlock waits for the reader, then lists the threads of the
// sandbox's first process, whose number bubblewrap sends on pid, before
// the command may start. Should that fail, the run goes on without
// reporting the layer's refusals (the init step then asks the kernel to
// log nothing).
func (r *run) expectLandlock(pid <-chan int) {
	if r.llOpened == nil {
		return
	}
	r.ll, r.llOpened = <-r.llOpened, nil
	if r.ll == nil {
		return
	}
	if err := r.ll.expect(<-pid); err != nil {
		r.o.debug("landlock: refusals are not reported: the sandbox's first process: " + err.Error())
		r.ll.close()
		r.ll = nil
	}
}

// closeLandlockAudit stops the reader of a run that ends early; one whose
// command never started waits for the reader to be opened, as a command
// that starts does, and stops it.
func (r *run) closeLandlockAudit() {
	if r.ll != nil {
		r.ll.close()
	} else if r.llOpened != nil {
		(<-r.llOpened).close()
	}
}

// reportLandlock reports the writes the second layer refused the ended
// command, as far as the kernel's audit told: in the result, the
// violation store (where ignoreViolations applies) and the audit log.
func (r *run) reportLandlock() {
	if r.ll == nil {
		return
	}
	denials, logged, lost, overflow := r.ll.finish()
	x := &landlockExplainer{p: r.p, home: r.o.Home, cwd: r.o.Cwd, granted: r.res.Landlock.Write}
	for _, d := range denials {
		why := x.explain(d)
		r.reportFile(d.Line(why.Short), why, violations.Record{Time: d.Time, Layer: "landlock", Path: d.Path, Access: strings.Join(d.Blockers, ","), Stage: "landlock"})
	}
	if n := logged - uint64(len(denials)); n > 0 {
		r.o.debug(fmt.Sprintf("landlock: %d more refusals of the same rights on the same paths, or past the first %d", n, maxLandlockDenials))
	}
	switch {
	case overflow:
		fmt.Fprintf(r.o.Stderr, "srt: warning: srt could not keep up with the kernel's audit records: writes the second layer refused may be missing from the violations\n")
	case lost > 0:
		fmt.Fprintf(r.o.Stderr, "srt: warning: the kernel's audit lost %d records while the command ran (its queue or rate limit was full): writes the second layer refused may be missing from the violations\n", lost)
	}
}

// ruleText is a rule's origin as the audit log names it: its key, and
// its place in the settings when known.
func ruleText(o policy.Origin) string {
	if o.Pos == "" {
		return o.Key
	}
	return o.Key + " " + o.Pos
}
