//go:build linux

package resolve

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"srt.dev/internal/untrusted"
)

// canCreateIn reports whether bubblewrap may create entries in dir, as it
// must to make a mount point there: whether this process may, and, with
// rootNoCaps (Host.Root, and a plan that drops every capability), whether
// root's classes may by the permission bits. Root's bubblewrap runs in a
// user namespace of its own where only root's uid and gid are mapped: its
// capabilities hold over a directory whose owner and group are root's,
// and elsewhere the permission bits decide, as for anyone, and as for the
// command, which has no capability (a project owned by another user:
// neither can create a name there). When it cannot tell, the answer is
// yes (a mount point is attempted).
func canCreateIn(dir string, rootNoCaps bool) bool {
	if unix.Access(dir, unix.W_OK|unix.X_OK) != nil {
		return false
	}
	if !rootNoCaps {
		return true
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return true
	}
	return rootMayCreate(&st)
}

// rootMayCreate is rootCanCreate for a directory as stat saw it, with
// this process's groups (yes when they cannot be read).
func rootMayCreate(st *unix.Stat_t) bool {
	groups, err := unix.Getgroups()
	if err != nil {
		return true
	}
	return rootCanCreate(st.Uid, st.Gid, st.Mode, uint32(unix.Getegid()), groups)
}

// rootCanCreate is canCreateIn for the sandbox's root (uid 0, gid egid,
// supplementary groups) and a directory of owner uid, group gid and mode.
func rootCanCreate(uid, gid, mode, egid uint32, groups []int) bool {
	const wx = 0o3 // write and search, in each class of the mode
	switch {
	case uid == 0 && gid == egid:
		return true // the capabilities apply
	case uid == 0:
		return mode>>6&wx == wx
	case gid == egid || slices.Contains(groups, int(gid)):
		return mode>>3&wx == wx
	default:
		return mode&wx == wx
	}
}

// foreignRoot says, with rootNoCaps (see canCreateIn), when the write
// root dir belongs to another user who has not let root's classes create
// files in it, that the command cannot write there; "" otherwise.
func foreignRoot(dir string, rootNoCaps bool) string {
	if !rootNoCaps {
		return ""
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Uid == 0 ||
		unix.Access(dir, unix.W_OK|unix.X_OK) == nil && rootMayCreate(&st) {
		return ""
	}
	// dir may be a name a sandboxed run made (an allowWrite glob matches
	// it): shown through untrusted.Quote.
	return fmt.Sprintf("%s is a write root, but it belongs to uid %d and srt runs as root: the sandbox's root has no capabilities over another user's files, so the command cannot create or remove files there (only change the files the permission bits let it); run srt as that user (sudo -u '#%d' srt ...)", untrusted.Quote(dir), st.Uid, st.Uid)
}
