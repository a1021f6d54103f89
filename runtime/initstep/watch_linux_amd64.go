//go:build linux

package initstep

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// WatchedCalls are the calls the write watch hands to srt (see
// WatchedCall), on x86-64: the *at calls and the older ones, then those that may change a
// process's root or mount namespace.
var WatchedCalls = []WatchedCall{
	{Nr: unix.SYS_OPEN, Name: "open", Kind: CallOpen, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: 1, NoFollow: -1},
	{Nr: unix.SYS_OPENAT, Name: "openat", Kind: CallOpen, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: 2, NoFollow: -1},
	{Nr: unix.SYS_OPENAT2, Name: "openat2", Kind: CallOpen, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: 2, NoFollow: -1},
	{Nr: unix.SYS_CREAT, Name: "creat", Kind: CallCreat, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_MKDIR, Name: "mkdir", Kind: CallMake, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_MKDIRAT, Name: "mkdirat", Kind: CallMake, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_MKNOD, Name: "mknod", Kind: CallMake, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_MKNODAT, Name: "mknodat", Kind: CallMake, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_SYMLINK, Name: "symlink", Kind: CallMake, Dir: -1, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_SYMLINKAT, Name: "symlinkat", Kind: CallMake, Dir: 1, Path: 2, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_LINK, Name: "link", Kind: CallMake, Dir: -1, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_LINKAT, Name: "linkat", Kind: CallMake, Dir: 2, Path: 3, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_UNLINK, Name: "unlink", Kind: CallRemove, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_UNLINKAT, Name: "unlinkat", Kind: CallRemove, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_RMDIR, Name: "rmdir", Kind: CallRemove, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_RENAME, Name: "rename", Kind: CallRename, Dir: -1, Path: 0, Dir2: -1, Path2: 1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_RENAMEAT, Name: "renameat", Kind: CallRename, Dir: 0, Path: 1, Dir2: 2, Path2: 3, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_RENAMEAT2, Name: "renameat2", Kind: CallRename, Dir: 0, Path: 1, Dir2: 2, Path2: 3, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_TRUNCATE, Name: "truncate", Kind: CallChange, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_CHMOD, Name: "chmod", Kind: CallChange, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_FCHMODAT, Name: "fchmodat", Kind: CallChange, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_FCHMODAT2, Name: "fchmodat2", Kind: CallChange, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: 3},
	{Nr: unix.SYS_UTIMENSAT, Name: "utimensat", Kind: CallChange, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: 3},
	{Nr: unix.SYS_CHROOT, Name: "chroot", Kind: CallNamespace, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_PIVOT_ROOT, Name: "pivot_root", Kind: CallNamespace, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_SETNS, Name: "setns", Kind: CallNamespace, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_CLONE3, Name: "clone3", Kind: CallNamespace, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: -1, NoFollow: -1},
	{Nr: unix.SYS_UNSHARE, Name: "unshare", Kind: CallNamespace, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: 0, NoFollow: -1},
	{Nr: unix.SYS_CLONE, Name: "clone", Kind: CallNamespace, Dir: -1, Path: -1, Dir2: -1, Path2: -1, Flags: 0, NoFollow: -1},
}
