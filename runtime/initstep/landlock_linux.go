//go:build linux

package initstep

// The second layer: Landlock (Documentation/userspace-api/landlock.rst in
// the kernel's source). bubblewrap's mount table decides what the command
// can write; the init step also restricts the command with Landlock to
// writes below the write roots, the run's TMPDIR and the plan's grants, so
// that a mistake in the mount table (a path bound writable that should
// not be, a mount the command can move) is not an escape on its own.
// Landlock grants by hierarchy and cannot carve a deny out of a grant:
// the write denies inside the write roots stay bubblewrap's alone.

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ABI is the Landlock ABI version of the running kernel, 0 when it
// has none (not built in, or disabled at boot).
func ABI() int {
	// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		return 0
	}
	return int(v)
}

// A LandlockSpec is what the init step's options ask of the second layer.
type LandlockSpec struct {
	Scopes []string // the scopes to keep (policy.LandlockScopes)
	Write  []string // the paths below which writes stay allowed
}

// parseLandlockArg reads one init option into *spec; false when a is not
// one of the second layer's.
func parseLandlockArg(a string, spec **LandlockSpec) (bool, error) {
	switch {
	case strings.HasPrefix(a, LandlockArg):
		if *spec == nil {
			*spec = &LandlockSpec{}
		}
		if v := strings.TrimPrefix(a, LandlockArg); v != "" {
			(*spec).Scopes = strings.Split(v, ",")
		}
		return true, nil
	case strings.HasPrefix(a, LandlockWriteArg):
		if *spec == nil {
			return true, errors.New(LandlockWriteArg + " without " + LandlockArg)
		}
		(*spec).Write = append((*spec).Write, strings.TrimPrefix(a, LandlockWriteArg))
		return true, nil
	}
	return false, nil
}

// Access rights (include/uapi/linux/landlock.h) by the ABI that brought
// them.
const (
	llWriteV1 = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR |
		unix.LANDLOCK_ACCESS_FS_REMOVE_FILE | unix.LANDLOCK_ACCESS_FS_MAKE_CHAR |
		unix.LANDLOCK_ACCESS_FS_MAKE_DIR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO |
		unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK | unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	// llFile are the rights a rule on a file (not a directory) may grant.
	llFile = unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_TRUNCATE | unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
)

// handledAccess is what the second layer restricts on ABI abi: every
// way of writing the file system the kernel knows; reading and executing
// are left to the mounts. REFER (ABI 2) keeps a rename or link from
// moving a file out of a write root into a place the command cannot
// write (without it, ABI 1 refuses every cross-directory rename and link);
// TRUNCATE (ABI 3) and IOCTL_DEV (ABI 5) are allowed only where writing
// is.
func handledAccess(abi int) uint64 {
	h := uint64(llWriteV1)
	if abi >= 2 {
		h |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		h |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		h |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return h
}

// scopeBits is the scope bits of names on ABI abi (none before 6).
func scopeBits(abi int, names []string) (uint64, error) {
	var s uint64
	for _, n := range names {
		switch n {
		case "abstract-unix-socket":
			s |= unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
		case "signal":
			s |= unix.LANDLOCK_SCOPE_SIGNAL
		default:
			return 0, fmt.Errorf("landlock: unknown scope %q", n)
		}
	}
	if abi < 6 {
		return 0, nil
	}
	return s, nil
}

// rulesetAttr is struct landlock_ruleset_attr up to scoped (ABI
// 6); the kernel reads the size it is given.
type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// A Ruleset is a ruleset built, not yet enforced.
type Ruleset struct {
	fd  int
	abi int
	// Skipped are the paths that do not exist in the sandbox (nothing
	// there to write).
	skipped []string
}

// Build makes the ruleset of spec on ABI abi: every handled right below
// each directory of spec.Write, the file rights on each file.
func (spec *LandlockSpec) Build(abi int) (*Ruleset, error) {
	if abi <= 0 {
		return nil, errors.New("landlock: the host asked for the second layer, and this kernel has no Landlock")
	}
	scoped, err := scopeBits(abi, spec.Scopes)
	if err != nil {
		return nil, err
	}
	handled := handledAccess(abi)
	attr := rulesetAttr{handledFS: handled, scoped: scoped}
	size := unsafe.Sizeof(attr.handledFS)
	switch {
	case abi >= 6:
		size = unsafe.Sizeof(attr)
	case abi >= 4:
		size = 2 * unsafe.Sizeof(attr.handledFS)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return nil, fmt.Errorf("landlock: creating the ruleset: %w", errno)
	}
	rs := &Ruleset{fd: int(fd), abi: abi}
	for _, p := range spec.Write {
		if err := rs.allow(p, handled); err != nil {
			unix.Close(rs.fd)
			return nil, err
		}
	}
	if err := rs.allowStreams(handled); err != nil {
		unix.Close(rs.fd)
		return nil, err
	}
	return rs, nil
}

// allowStreams lets the command open again, for writing, the files its
// standard output and error are open on for writing already
// (/dev/stdout, /dev/stderr, /proc/self/fd/N): nothing it could not write
// anyway. A pipe or a socket needs no rule (Landlock does not restrict
// them); standard input, even when it is open for writing, gets none.
func (rs *Ruleset) allowStreams(handled uint64) error {
	for _, fd := range []int{1, 2} {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if err != nil || fl&unix.O_ACCMODE == unix.O_RDONLY {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) != nil {
			continue
		}
		if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG && t != unix.S_IFCHR {
			continue
		}
		if err := rs.allowFile(fmt.Sprintf("/proc/self/fd/%d", fd), handled&llFile); err != nil {
			return err
		}
	}
	return nil
}

// allow adds the rule for p: handled below a directory, what a file rule
// can take of it on a file. A path the sandbox does not have is skipped.
func (rs *Ruleset) allow(p string, handled uint64) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOENT) {
		rs.skipped = append(rs.skipped, p)
		return nil
	}
	if err != nil {
		return fmt.Errorf("landlock: opening %s: %w", p, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("landlock: %s: %w", p, err)
	}
	access := handled
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= llFile
	}
	return rs.add(p, fd, access)
}

// allowFile adds a rule for the file p leads to (a magic link of /proc
// included), with access.
func (rs *Ruleset) allowFile(p string, access uint64) error {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("landlock: opening %s: %w", p, err)
	}
	defer unix.Close(fd)
	return rs.add(p, fd, access)
}

// add adds the rule of access below the file or directory fd.
func (rs *Ruleset) add(p string, fd int, access uint64) error {
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs.fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock: a rule for %s: %w", p, errno)
	}
	return nil
}

// Enforce restricts the calling OS thread, which it locks to the calling
// goroutine for good: what that goroutine starts (the command) inherits
// the restriction. Landlock needs no_new_privs (bubblewrap sets it for the
// whole sandbox already). The ruleset's descriptor is closed.
//
// With a token (ABI 7 and later), the host reads the kernel's audit for
// this run's refusals (landlock_audit_linux.go): the thread bears the
// token as its name while it makes the domain (the kernel records the
// name with it), and the command's refusals are logged after it is
// executed too (LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON). Without one, the
// kernel's default: nothing the command does is logged.
func (rs *Ruleset) Enforce(token string) error {
	defer unix.Close(rs.fd)
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("landlock: no_new_privs: %w", err)
	}
	var flags uintptr
	if token != "" && rs.abi >= 7 {
		restore, err := nameThread(token)
		if err != nil {
			return err
		}
		defer restore()
		flags = unix.LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
	}
	if _, _, errno := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(rs.fd), flags, 0); errno != 0 {
		return fmt.Errorf("landlock: restricting the command: %w", errno)
	}
	return nil
}

// nameThread names the calling thread name (cut to the 15 bytes a name
// holds); restore gives it its name back.
func nameThread(name string) (restore func(), err error) {
	var old [16]byte
	if err := unix.Prctl(unix.PR_GET_NAME, uintptr(unsafe.Pointer(&old[0])), 0, 0, 0); err != nil {
		return nil, fmt.Errorf("landlock: the thread's name: %w", err)
	}
	var b [16]byte
	copy(b[:15], name)
	if err := unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0); err != nil {
		return nil, fmt.Errorf("landlock: naming the thread: %w", err)
	}
	return func() { unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&old[0])), 0, 0, 0) }, nil
}
