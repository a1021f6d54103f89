//go:build linux

package initstep

// Watching the command's writes (WatchArg): a seccomp filter that hands
// each system call that may write to a path to srt on the host (seccomp
// user notification), which lets it go on unchanged and, after it, finds
// out whether the sandbox refused it (runtime/sandbox: writes_linux.go).
// The filter decides nothing: every call it watches continues as the
// command made it, under the sandbox's mounts, Landlock and bubblewrap's
// own seccomp program, which the kernel evaluates as before. It only
// reports. WatchedCalls is the one list of what it watches: the filter
// is built from it, and srt reads each call's paths by it.

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A CallKind says what a watched call does to its paths.
type CallKind uint8

// The kinds of watched calls.
const (
	// CallOpen opens Path with the flags in argument Flags (or, for
	// openat2, in the struct open_how argument Flags points to): a write
	// when they ask to write, create or truncate.
	CallOpen CallKind = iota + 1
	// CallCreat is creat(2): open for writing, creating, truncating.
	CallCreat
	// CallMake makes a new name at Path: mkdir, mknod, symlink and link
	// (Path is their new name).
	CallMake
	// CallRemove removes the name at Path: unlink, rmdir.
	CallRemove
	// CallRename moves Path to Path2: the first name goes, the second is
	// made or replaced.
	CallRename
	// CallChange changes the file at Path in place: truncate, chmod,
	// utimensat (a null Path changes the descriptor Dir: not a path).
	CallChange
	// CallNamespace may give a process another root or mount namespace:
	// chroot, pivot_root, setns, clone3, and unshare and clone with
	// CLONE_NEWNS in argument Flags. It writes nothing; srt takes the
	// sandbox's processes to share one root and mount namespace only
	// until the first such call (a sandbox that refuses them, as the
	// seccomp program Namespaces does, never makes one: its refusal comes
	// before the watch's notification).
	CallNamespace
)

// A WatchedCall is a system call the filter hands to srt: its number on
// this architecture, and which arguments hold its paths. An index of -1
// means none: a path without a directory argument starts at the working
// directory.
type WatchedCall struct {
	Nr   uint32
	Name string
	Kind CallKind
	// Dir and Path are the first path's arguments.
	Dir, Path int
	// Dir2 and Path2 are the second path's (rename's and link's new
	// name); -1 when there is none.
	Dir2, Path2 int
	// Flags is the argument of an open call's flags (openat2: the
	// address of its struct open_how); the filter lets an open pass
	// without asking when they ask for no write. For unshare and clone,
	// the argument of their CLONE_ flags: the filter lets them pass
	// without CLONE_NEWNS. -1 for other calls.
	Flags int
	// NoFollow is the argument of the AT_ flags that may hold
	// AT_SYMLINK_NOFOLLOW, or -1.
	NoFollow int
}

// OpenWriteFlags are the open flags that make an open a write: to write,
// to create, to truncate (O_TMPFILE comes with O_WRONLY or O_RDWR).
const OpenWriteFlags = unix.O_WRONLY | unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC

// flagBits are the bits of argument Flags of which the filter hands the
// call to srt when one is set; 0 when it hands every such call.
func (c WatchedCall) flagBits() uint32 {
	switch {
	case c.Flags < 0 || c.Nr == unix.SYS_OPENAT2:
		return 0
	case c.Kind == CallNamespace:
		return unix.CLONE_NEWNS
	}
	return OpenWriteFlags
}

// WatchedCallOf is the watched call of number nr, if any.
func WatchedCallOf(nr uint32) (WatchedCall, bool) {
	for _, c := range WatchedCalls {
		if c.Nr == nr {
			return c, true
		}
	}
	return WatchedCall{}, false
}

// seccomp_data's layout: nr (4 bytes), arch (4), instruction pointer
// (8), then six 8-byte arguments.
const (
	dataNr   = 0
	dataArch = 4
	dataArgs = 16
)

// WatchProgram is the filter: for this architecture's watched calls, an
// open only when its flags ask to write, unshare and clone only with
// CLONE_NEWNS, it returns SECCOMP_RET_USER_NOTIF;
// for every other call, and for calls of another architecture (or the
// x32 ABI's numbers), SECCOMP_RET_ALLOW.
func WatchProgram() ([]unix.SockFilter, error) {
	if len(WatchedCalls) == 0 {
		return nil, errors.New("srt does not watch writes on this architecture")
	}
	const (
		ldW  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
	)
	// Jumps are forward and named by label; resolved once every
	// instruction is placed.
	type ins struct {
		f      unix.SockFilter
		jt, jf string
	}
	var prog []ins
	labels := map[string]int{}
	add := func(code uint16, k uint32, jt, jf string) {
		prog = append(prog, ins{unix.SockFilter{Code: code, K: k}, jt, jf})
	}
	add(ldW, dataArch, "", "")
	add(jeq, auditArch, "", "allow")
	add(ldW, dataNr, "", "")
	for _, c := range WatchedCalls {
		target := "notify"
		if c.flagBits() != 0 {
			target = c.Name
		}
		add(jeq, c.Nr, target, "")
	}
	add(ret, unix.SECCOMP_RET_ALLOW, "", "")
	for _, c := range WatchedCalls {
		if c.flagBits() == 0 {
			continue
		}
		labels[c.Name] = len(prog)
		// The flags are an int: the low word of the argument (both
		// architectures are little-endian).
		add(ldW, uint32(dataArgs+8*c.Flags), "", "")
		add(jset, c.flagBits(), "notify", "allow")
	}
	labels["allow"] = len(prog)
	add(ret, unix.SECCOMP_RET_ALLOW, "", "")
	labels["notify"] = len(prog)
	add(ret, unix.SECCOMP_RET_USER_NOTIF, "", "")
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = in.f
		for _, j := range []struct {
			label string
			to    *uint8
		}{{in.jt, &out[i].Jt}, {in.jf, &out[i].Jf}} {
			if j.label == "" {
				continue
			}
			at, ok := labels[j.label]
			if !ok || at <= i || at-i-1 > 255 {
				return nil, fmt.Errorf("watch filter: bad jump to %q", j.label)
			}
			*j.to = uint8(at - i - 1)
		}
	}
	return out, nil
}

// InstallWatch installs the filter on the calling thread (and so on the
// processes it starts) and returns the descriptor srt receives its
// notifications on. The sandbox's processes have no_new_privs already
// (bubblewrap sets it); it is set again, as the kernel requires it of an
// unprivileged filter.
func InstallWatch() (int, error) {
	prog, err := WatchProgram()
	if err != nil {
		return -1, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return -1, fmt.Errorf("watching writes: no_new_privs: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	if errno != 0 {
		return -1, fmt.Errorf("watching writes: seccomp: %w", errno)
	}
	return int(fd), nil
}
