//go:build linux

package sandbox

// Reporting the writes the sandbox refused, as any user, without the
// kernel's audit. The init step watches the command's calls that may
// write to a path (initstep.WatchedCalls) with seccomp user
// notification and hands srt the descriptor of the watch. For each such
// call srt reads the paths from the command's memory, resolves them in
// the sandbox (its root and working directory, through /proc), lets the
// call go on unchanged, and then asks the kernel whether the sandbox
// refused it: a name made or removed in a directory of a read-only mount,
// a file of a read-only mount opened for writing or changed. Only those
// are reported: a write that succeeded never is, nor one the file's own
// permissions refuse the command's user (writes_perm_linux.go), and srt
// decides nothing (the mounts, Landlock and bubblewrap's seccomp program
// refuse as they would without the watch).
//
// The call waits only for what cannot be read after it: its paths and
// the directory a relative one starts at. The sandbox's root and mount
// namespace are opened once, while its processes share them (until a
// call of initstep.CallNamespace), and the check runs after the call
// has gone on, when no other call is waiting.
//
// One goroutine does it all: a watched call wakes one thread of srt (the
// kernel wakes it on the command's processor), and no other (a check on
// a goroutine of its own would wake a second thread for each call, which
// the kernel often runs before the command). The system calls that serve a
// call and cannot block (the watch's ioctls, a poll that does not wait,
// reading a link in /proc) bypass the Go scheduler's system call hooks;
// those that may block (the poll that waits for calls, reading the
// command's memory, which may fault its pages in, the check's calls on
// the sandbox's files) go through them, as any other.
//
// The command chooses what the watch reads: a path is at most PATH_MAX
// bytes, read with process_vm_readv, and a call whose process is gone or
// whose notification is no longer pending (another process now has the
// number) is passed over. What the command can make the watch report is
// a refusal of its own (a path it changes between the call and the read
// shows as refused): reporting, never a rule.

import (
	"bytes"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/initstep"
	"srt.dev/runtime/violations"
)

// seccompNotif and seccompResp are the kernel's struct seccomp_notif and
// struct seccomp_notif_resp.
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type seccompResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// SECCOMP_IOCTL_NOTIF_ID_VALID and SECCOMP_IOCTL_NOTIF_SET_FLAGS
// (_IOW('!', 2, __u64) and _IOW('!', 4, __u64)).
const (
	notifIDValid  = 0x40082102
	notifSetFlags = 0x40082104
)

// maxWriteRefusals bounds what one run keeps, as the violation store
// does; more are counted.
const maxWriteRefusals = 256

// maxPendingChecks bounds the checks waiting to be judged: past it, a
// watched call waits until one is judged (never is one dropped).
const maxPendingChecks = 256

// A writeWatch serves the notifications of one run's watch. Serving a
// call (handle) does only what must be done while it is held: read its
// paths and where they start, let it go on; whether the sandbox refused
// it is judged after (judge), on the same goroutine, once no other call
// is waiting.
type writeWatch struct {
	fd       int // the watch's descriptor
	stopR    int // a pipe's read end: readable when the watch is to stop
	stopW    int
	done     chan struct{} // closed when every call served is judged
	closing  sync.Once
	stopping atomic.Bool // set by stop: serve answers no more calls

	// The rest is serve's goroutine's.
	queue []*pendingCheck // checks not yet judged, in the order served
	buf   []byte          // a page, for the paths read
	// creds are the credentials of the first process the watch saw,
	// read before its call went on, for a check whose process has gone
	// (the sandbox's processes have no capability to change theirs);
	// written by serve before the first check is queued, then only read.
	creds     creds
	haveCreds bool
	// oneRoot says that the sandbox's processes have had one root and
	// mount namespace so far: no call of initstep.CallNamespace went on
	// (read and written by serve only). While it holds, root and ns are
	// those of the first process the watch saw, opened once (-1 until
	// then); closed when the watch stops.
	oneRoot  bool
	root, ns int

	mu       sync.Mutex
	refusals []violations.FileRefusal
	seen     map[string]bool
	count    int // refusals, repeats included
	calls    int // notifications served
}

// newWriteWatch serves the watch's descriptor fd until stop.
func newWriteWatch(fd int) (*writeWatch, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// The command's thread waits for srt on each watched call: the
	// kernel wakes srt's thread on the same processor when it can.
	unix.Syscall(unix.SYS_IOCTL, uintptr(fd), notifSetFlags, uintptr(unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP))
	w := &writeWatch{fd: fd, stopR: p[0], stopW: p[1], done: make(chan struct{}),
		seen: map[string]bool{}, buf: make([]byte, pageSize), oneRoot: true, root: -1, ns: -1}
	go func() {
		w.serve()
		for _, q := range w.queue {
			w.judge(q)
		}
		w.queue = nil
		close(w.done)
	}()
	return w, nil
}

// serve answers notifications, and judges the calls served while none
// is waiting, until stop is called or no process of the sandbox is left.
func (w *writeWatch) serve() {
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(w.stopR), Events: unix.POLLIN}}
	for !w.stopping.Load() {
		waiting, ended := pollNow(w.fd)
		switch {
		case waiting && len(w.queue) < maxPendingChecks:
			var n seccompNotif
			if err := w.ioctl(unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n))); err != nil {
				if err == unix.EINTR || err == unix.ENOENT {
					continue // the process went before srt read its call
				}
				return
			}
			w.handle(&n)
			continue
		case len(w.queue) > 0:
			q := w.queue[0]
			w.queue[0] = nil
			w.queue = w.queue[1:]
			w.judge(q)
			continue
		case ended:
			return
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return
		}
		if fds[1].Revents != 0 {
			return
		}
	}
}

// pollNow says, without waiting, whether a notification is waiting on the
// watch's descriptor fd, and whether every process of the sandbox has
// ended (POLLHUP, and none waiting). POLLERR (the kernel's answer when a
// signal came as it looked) is neither.
func pollNow(fd int) (waiting, ended bool) {
	for {
		pfd := unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}
		var zero unix.Timespec
		if _, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&pfd)), 1, uintptr(unsafe.Pointer(&zero)), 0, 0, 0); errno != 0 {
			if errno == unix.EINTR {
				continue
			}
			return false, true
		}
		if pfd.Revents&unix.POLLERR != 0 && pfd.Revents&(unix.POLLIN|unix.POLLHUP) == 0 {
			continue
		}
		return pfd.Revents&unix.POLLIN != 0, pfd.Revents&unix.POLLIN == 0 && pfd.Revents&(unix.POLLHUP|unix.POLLNVAL) != 0
	}
}

// judge checks a call that went on and keeps it if the sandbox refused
// it.
func (w *writeWatch) judge(q *pendingCheck) {
	// The call has been made, or is being made: what the kernel says
	// about the mounts does not depend on it.
	if judgeDelay > 0 {
		time.Sleep(judgeDelay)
	}
	if access, p, ok := q.refused(); ok && q.hostAllows(access, p, w.credsOf(q.pid)) {
		w.keep(violations.FileRefusal{Time: time.Now(), Path: p, Access: access})
	}
	q.close()
}

// handle reads a call's paths and lets it go on; judge checks it after.
// The watch's ioctls do not block (RECV comes after POLLIN): they bypass
// the Go scheduler's system call hooks.
func (w *writeWatch) handle(n *seccompNotif) {
	c, known := initstep.WatchedCallOf(uint32(n.nr))
	if known && c.Kind == initstep.CallNamespace {
		// Every later call's process may have a root or mount
		// namespace of its own: each is read from its process, as the
		// calls of an unknown process would be.
		w.oneRoot = false
		known = false
	}
	var q *pendingCheck
	if known {
		q = w.read(n, c)
	}
	if q != nil && !w.haveCreds {
		w.creds, w.haveCreds = readCreds(q.pid)
	}
	// The notification is still pending: what was read is this call's
	// (its process has not gone and given its number to another).
	if q != nil && w.ioctl(notifIDValid, uintptr(unsafe.Pointer(&n.id))) != nil {
		q.close()
		q = nil
	}
	resp := seccompResp{id: n.id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
	w.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&resp)))
	w.mu.Lock()
	w.calls++
	w.mu.Unlock()
	if q == nil {
		return
	}
	if w.oneRoot && w.root < 0 {
		// The first process's root and namespace, read while its call
		// was pending, are the sandbox's: every later check uses them.
		w.root, w.ns, q.shared = q.root, q.ns, true
	}
	w.queue = append(w.queue, q)
}

// judgeDelay holds back each check after its call goes on; tests set it
// to check after the sandbox has ended.
var judgeDelay time.Duration

// credsOf are the credentials of process pid, or, when it has gone, of
// the first process the watch saw.
func (w *writeWatch) credsOf(pid int) creds {
	if c, ok := readCreds(pid); ok {
		return c
	}
	if w.haveCreds {
		return w.creds
	}
	return creds{caps: true} // unknown: every refusal is the sandbox's
}

func (w *writeWatch) ioctl(req uint, arg uintptr) error {
	if _, _, errno := unix.RawSyscall(unix.SYS_IOCTL, uintptr(w.fd), uintptr(req), arg); errno != 0 {
		return errno
	}
	return nil
}

func (w *writeWatch) keep(r violations.FileRefusal) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.count++
	// One line per path: a touch that is refused opening the file is
	// refused setting its times too.
	k := r.Path
	if w.seen[k] || len(w.refusals) == maxWriteRefusals {
		return
	}
	w.seen[k] = true
	w.refusals = append(w.refusals, r)
}

// stop ends serving and returns the refusals, in the order they were
// made, and how many there were, repeats included, once every call
// served is judged. Calls made after it fail (ENOSYS): it is called once
// the sandbox has ended.
func (w *writeWatch) stop() (refusals []violations.FileRefusal, count, calls int) {
	if w == nil {
		return nil, 0, 0
	}
	w.closing.Do(func() {
		// serve sees the flag between two calls, or the pipe while
		// it waits.
		w.stopping.Store(true)
		unix.Write(w.stopW, []byte{1})
		<-w.done
		unix.Close(w.fd)
		unix.Close(w.stopR)
		unix.Close(w.stopW)
		if w.root >= 0 {
			unix.Close(w.root)
			unix.Close(w.ns)
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.refusals, w.count, w.calls
}

// A pendingCheck is what a watched call asks, read before it goes on:
// its paths resolved in the sandbox, held by the sandbox's root.
type pendingCheck struct {
	root int // the process's root directory (O_PATH)
	// ns is the process's mount namespace, held open until the check is
	// done: when the sandbox ends first, its mounts stay as they were,
	// and the check does not look through root at what is below them
	// (its read-only root, where a writable mount was).
	ns    int
	pid   int
	call  string
	kind  initstep.CallKind
	args  [6]uint64
	flags uint64 // an open's flags
	// paths are the call's paths, absolute in the sandbox, not cleaned
	// (the kernel resolves them); follow says whether the call follows a
	// link at the first one.
	paths  []string
	follow bool
	// shared says that root and ns are the watch's, closed when it
	// stops, not by close.
	shared bool
}

func (q *pendingCheck) close() {
	if !q.shared {
		unix.Close(q.root)
		unix.Close(q.ns)
	}
}

// read reads the call's paths and flags from the process's memory and
// its directories from /proc; nil when it writes nothing or cannot be
// read.
func (w *writeWatch) read(n *seccompNotif, c initstep.WatchedCall) *pendingCheck {
	pid := int(n.pid)
	// Only the calls that open or change a file follow a link at the end
	// of its path: unlink, rmdir and rename act on the link, and mkdir,
	// mknod, symlink and link make their new name where the link is
	// (EEXIST, even when it leads nowhere).
	q := &pendingCheck{pid: pid, call: c.Name, kind: c.Kind, args: n.args, follow: c.Kind == initstep.CallOpen || c.Kind == initstep.CallCreat || c.Kind == initstep.CallChange}
	if c.Kind == initstep.CallOpen {
		q.flags = n.args[c.Flags] & 0xffffffff
		if c.Name == "openat2" {
			// struct open_how: flags, mode, resolve (8 bytes each).
			var how [8]byte
			if !readMem(pid, n.args[c.Flags], how[:]) {
				return nil
			}
			q.flags = *(*uint64)(unsafe.Pointer(&how[0]))
		}
		// O_PATH opens the name only, whatever the other flags say.
		if q.flags&initstep.OpenWriteFlags == 0 || q.flags&unix.O_PATH != 0 {
			return nil
		}
		// O_CREAT|O_EXCL never follows a link at the end (EEXIST).
		q.follow = q.flags&unix.O_NOFOLLOW == 0 && q.flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL
	}
	if c.NoFollow >= 0 && n.args[c.NoFollow]&unix.AT_SYMLINK_NOFOLLOW != 0 {
		q.follow = false
	}
	for _, a := range [][2]int{{c.Dir, c.Path}, {c.Dir2, c.Path2}} {
		if a[1] < 0 {
			continue
		}
		p, ok := readPath(pid, n.args[a[1]], w.buf)
		if !ok || p == "" {
			return nil // a descriptor's call (utimensat with no path): no path to report
		}
		if !strings.HasPrefix(p, "/") {
			dir := "cwd"
			if a[0] >= 0 && int32(n.args[a[0]]) != unix.AT_FDCWD {
				dir = "fd/" + strconv.Itoa(int(int32(n.args[a[0]])))
			}
			k, err := readProcLink("/proc/"+strconv.Itoa(pid)+"/"+dir, w.buf)
			if err != nil || k == len(w.buf) {
				return nil
			}
			base := w.buf[:k]
			if !bytes.HasPrefix(base, []byte("/")) || bytes.HasSuffix(base, []byte(" (deleted)")) {
				return nil
			}
			p = string(base) + "/" + p
		}
		q.paths = append(q.paths, p)
	}
	if w.oneRoot && w.root >= 0 {
		q.root, q.ns, q.shared = w.root, w.ns, true
		return q
	}
	proc := "/proc/" + strconv.Itoa(pid)
	root, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	ns, err := unix.Open(proc+"/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(root)
		return nil
	}
	q.root, q.ns = root, ns
	return q
}

// readMem reads len(b) bytes at addr of process pid.
func readMem(pid int, addr uint64, b []byte) bool {
	n, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &b[0], Len: uint64(len(b))}}, []unix.RemoteIovec{{Base: uintptr(addr), Len: len(b)}}, 0)
	return err == nil && n == len(b)
}

// readProcLink reads the link p of /proc into buf, as readlink(2) does,
// bypassing the Go scheduler's system call hooks: reading a process's
// link does not block.
func readProcLink(p string, buf []byte) (int, error) {
	b, err := unix.BytePtrFromString(p)
	if err != nil {
		return 0, err
	}
	atFDCWD := unix.AT_FDCWD
	n, _, errno := unix.RawSyscall6(unix.SYS_READLINKAT, uintptr(atFDCWD), uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// pageSize is the unit readPath reads in: no read crosses a page.
const pageSize = 4096

// readPath reads the NUL-terminated path at addr of process pid, at most
// PATH_MAX bytes, a page at a time (the string may end just before a page
// that is not mapped), into buf (pageSize bytes).
func readPath(pid int, addr uint64, buf []byte) (string, bool) {
	if addr == 0 {
		return "", true
	}
	var out []byte
	for len(out) < unix.PathMax {
		chunk := pageSize - int(addr%pageSize)
		n, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(chunk)}}, []unix.RemoteIovec{{Base: uintptr(addr), Len: chunk}}, 0)
		if err != nil || n <= 0 {
			return "", false
		}
		if i := bytes.IndexByte(buf[:n], 0); i >= 0 {
			return string(append(out, buf[:i]...)), true
		}
		out = append(out, buf[:n]...)
		addr += uint64(n)
	}
	return "", false
}

// fsState is what the kernel says of a path in the sandbox: whether it
// exists, whether the mount it is on is read-only, and whether it is a
// regular file (the only kind a read-only mount refuses to open for
// writing or truncate: a directory is EISDIR, a link opened with
// O_NOFOLLOW ELOOP, and a FIFO, a socket or a device opens; stat asks
// only on a read-only mount).
type fsState struct {
	exists, readOnly, regular bool
}

// stat resolves p below the process's root, as the process would (links
// followed inside the sandbox; the last one when follow).
func (q *pendingCheck) stat(p string, follow bool) fsState {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	if !follow {
		how.Flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat2(q.root, p, &how)
	if err != nil {
		return fsState{}
	}
	defer unix.Close(fd)
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) != nil || sfs.Flags&unix.ST_RDONLY == 0 {
		// The kind of file matters only on a read-only mount.
		return fsState{exists: true}
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fsState{exists: true}
	}
	return fsState{exists: true, readOnly: true, regular: st.Mode&unix.S_IFMT == unix.S_IFREG}
}

// stateOf is the fsState of the open descriptor fd, whose fstat is st.
func stateOf(fd int, st *unix.Stat_t) fsState {
	var sfs unix.Statfs_t
	if unix.Fstatfs(fd, &sfs) != nil {
		return fsState{exists: true}
	}
	return fsState{exists: true, readOnly: sfs.Flags&unix.ST_RDONLY != 0, regular: st.Mode&unix.S_IFMT == unix.S_IFREG}
}

// maxLinks bounds the links final follows, as the kernel does (40).
const maxLinks = 40

// final is where a call that follows the link at the end of p lands: p
// with each link at its end replaced by what it points to, read below
// the process's root, as the kernel follows it, with what the kernel
// says of that place (the stat of p, followed, in one walk); p itself
// when it is no link, and "" for a loop.
func (q *pendingCheck) final(p string) (string, fsState) {
	for range maxLinks {
		how := unix.OpenHow{Flags: unix.O_PATH | unix.O_NOFOLLOW | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
		fd, err := unix.Openat2(q.root, p, &how)
		if err != nil {
			return p, fsState{}
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			unix.Close(fd)
			return p, fsState{exists: true}
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			state := stateOf(fd, &st)
			unix.Close(fd)
			return p, state
		}
		buf := make([]byte, unix.PathMax)
		n, err := unix.Readlinkat(fd, "", buf)
		unix.Close(fd)
		if err != nil {
			return p, fsState{exists: true}
		}
		to := string(buf[:n])
		if !strings.HasPrefix(to, "/") {
			dir, _ := parentOf(p)
			to = dir + "/" + to
		}
		p = to
	}
	return "", fsState{}
}

// parentOf is the directory of p and its last name ("" for none: the
// root, or a name such as "." or "..", which no call makes or removes).
func parentOf(p string) (dir, name string) {
	p = strings.TrimRight(p, "/")
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", ""
	}
	dir, name = p[:i], p[i+1:]
	if dir == "" {
		dir = "/"
	}
	if name == "" || name == "." || name == ".." {
		return "", ""
	}
	return dir, name
}

// refused says whether the sandbox refused the call, what it refused and
// where: the kernel refuses with EROFS a name made or removed in a
// directory of a read-only mount, and a file of one opened for writing
// or changed; a name that exists is not made again (EEXIST comes first),
// and one that does not exist is neither opened nor changed (ENOENT). A
// file mounted read-only over a name of a writable directory (a write
// deny) cannot be removed or replaced either (EBUSY).
func (q *pendingCheck) refused() (access, p string, ok bool) {
	first := q.paths[0]
	var target fsState
	if q.follow && (q.kind == initstep.CallOpen || q.kind == initstep.CallCreat || q.kind == initstep.CallChange) {
		// Most such calls wrote where they could: where the path leads
		// (the kernel following its links in the sandbox's root, as
		// final does) exists on a writable mount, which refuses none of
		// them. Then final's walk is not needed.
		if st := q.stat(first, true); st.exists && !st.readOnly {
			return "", "", false
		}
		// The call writes where the link at the end leads: that place
		// decides, and is the one reported.
		if first, target = q.final(first); first == "" {
			return "", "", false // a loop: ELOOP, not the sandbox's refusal
		}
	} else {
		target = q.stat(first, q.follow)
	}
	dir, _ := parentOf(first)
	if dir == "" {
		return "", "", false
	}
	// The directory is asked only when a case below reads it: a name
	// made where none is, one removed or renamed that is there.
	var parent fsState
	switch q.kind {
	case initstep.CallOpen, initstep.CallCreat, initstep.CallMake:
		if !target.exists {
			parent = q.stat(dir, true)
		}
	case initstep.CallRemove, initstep.CallRename:
		if target.exists {
			parent = q.stat(dir, true)
		}
	}
	clean := path.Clean(first)
	switch q.kind {
	case initstep.CallOpen, initstep.CallCreat:
		if q.kind == initstep.CallCreat {
			q.flags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
		}
		writes := q.flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_TRUNC) != 0
		excl := q.flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL
		switch {
		case target.exists && writes && !excl && target.readOnly && target.regular:
			return "write", clean, true
		case !target.exists && q.flags&unix.O_CREAT != 0 && parent.exists && parent.readOnly:
			return "create", clean, true
		}
	case initstep.CallMake:
		if !target.exists && parent.exists && parent.readOnly {
			return makeAccess(q.call), clean, true
		}
	case initstep.CallRemove:
		if target.exists && (parent.readOnly || target.readOnly) {
			if q.call == "rmdir" || q.call == "unlinkat" && q.args[2]&unix.AT_REMOVEDIR != 0 {
				return "rmdir", clean, true
			}
			return "remove", clean, true
		}
	case initstep.CallChange:
		if target.exists && target.readOnly && (target.regular || q.call != "truncate") {
			return changeAccess(q.call), clean, true
		}
	case initstep.CallRename:
		if target.exists && (parent.readOnly || target.readOnly) {
			return "rename", clean, true
		}
		if len(q.paths) > 1 {
			to := q.paths[1]
			if d, _ := parentOf(to); d != "" {
				t, pd := q.stat(to, false), q.stat(d, true)
				if target.exists && (pd.readOnly || t.exists && t.readOnly) {
					return "rename-to", path.Clean(to), true
				}
			}
		}
	}
	return "", "", false
}

// makeAccess is what a call of CallMake makes.
func makeAccess(call string) string {
	switch {
	case strings.HasPrefix(call, "mkdir"):
		return "mkdir"
	case strings.HasPrefix(call, "symlink"):
		return "symlink"
	case strings.HasPrefix(call, "link"):
		return "link"
	}
	return "mknod"
}

// changeAccess is what a call of CallChange changes.
func changeAccess(call string) string {
	switch {
	case call == "truncate":
		return "truncate"
	case strings.Contains(call, "chmod"):
		return "chmod"
	}
	return "times"
}

// reportWrites reports the writes the sandbox refused the ended command,
// as the watch saw them: in the result, the violation store (where
// ignoreViolations applies) and the audit log.
func (r *run) reportWrites() {
	if r.ww == nil {
		return
	}
	refusals, count, calls := r.ww.stop()
	r.o.debug(fmt.Sprintf("write watch: %d calls watched, %d refused", calls, count))
	x := newWriteExplainer(r.p, r.res, r.steps, r.o.Home, r.o.Cwd, r.state())
	reasons := make([]landlockReason, len(refusals))
	for i, f := range refusals {
		reasons[i] = x.explain(f)
	}
	// One refusal line per fix: a build that writes a thousand files in a
	// cache it may not write gets one line, with the count; the violation
	// lines and the audit log keep every path.
	first, more := map[string]int{}, map[string]int{}
	for i, why := range reasons {
		k := why.Fix
		if k == "" {
			k = why.Why
		}
		if _, ok := first[k]; ok {
			more[k]++
			reasons[i].Why = ""
			continue
		}
		first[k] = i
	}
	for k, n := range more {
		why := &reasons[first[k]]
		why.Why = strings.TrimSuffix(why.Why, ".") + fmt.Sprintf(" (and %d more refused writes with the same fix: --violations lists them).", n)
	}
	for i, f := range refusals {
		why := reasons[i]
		r.reportFile(f.Line(why.Short), why, violations.Record{Time: f.Time, Layer: "mounts", Path: f.Path, Access: f.Access, Stage: "mounts"})
	}
	if n := count - len(refusals); n > 0 {
		r.o.debug(fmt.Sprintf("write watch: %d more refusals of the same writes, or past the first %d", n, maxWriteRefusals))
	}
}

// watchDoctor is srt doctor's line on the write watch: whether this
// kernel hands a seccomp filter's calls to a supervisor
// (SECCOMP_GET_ACTION_AVAIL for SECCOMP_RET_USER_NOTIF).
func watchDoctor() Check {
	c := Check{Name: "refused writes reported (write watch)", OK: true}
	if len(initstep.WatchedCalls) == 0 {
		c.Detail = "not on this architecture"
		c.Note = "srt runs without reporting the writes the sandbox refuses"
		return c
	}
	action := uint32(unix.SECCOMP_RET_USER_NOTIF)
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); errno != 0 {
		c.Detail = "this kernel has no seccomp user notification (" + errno.Error() + "; Linux 5.5 or later)"
		c.Note = "srt runs without reporting the writes the sandbox refuses"
		return c
	}
	c.Detail = "seccomp user notification: srt names each write the sandbox refuses, the rule and what to change (SRT_WRITE_WATCH=off turns it off)"
	return c
}

// reportFile reports one refused file operation, its violation line and
// why: in the audit log (rec, completed), the violation store (where
// ignoreViolations applies), OnViolation and the result.
func (r *run) reportFile(line string, why landlockReason, rec violations.Record) {
	m := r.m
	if m.audit != nil {
		rec.Reason, rec.Rule = why.Short, ruleText(why.Rule)
		rec.Program, rec.CommandHash = violations.ProgramOf(r.text), violations.CommandHash(r.key)
		m.audit.Write(rec)
	}
	e, kept := m.store.Add(line, r.key, rec.Time)
	if !kept {
		return
	}
	e.Why = why.Why
	if m.o.OnViolation != nil {
		m.o.OnViolation(e)
	}
	r.out.Violations = append(r.out.Violations, e)
}
