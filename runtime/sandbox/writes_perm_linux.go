//go:build linux

package sandbox

// Whether a write the watch saw refused is the sandbox's to report. The
// watch reports what a read-only mount refused (Landlock's refusals, also
// EACCES, come from the kernel's audit: landlock_audit_linux.go). A write
// the file's own permissions refuse the command's user fails without the
// sandbox too, and a write root would not help: opening a file of a
// read-only mount for writing without the right is EACCES before the
// mount is asked, and mkdir, chmod or unlink there are EROFS first but
// EACCES or EPERM once the mount is writable. Such a write is not
// reported. The permissions are those the kernel checks (fs/namei.c,
// generic_permission and may_delete, fs/attr.c setattr_prepare): the
// permission bits of the file or its directory for the process's file
// system user and groups; a process with any effective capability, and a
// file whose access ACL could grant what its group bits allow, are taken
// to have the right, so that a refusal of the sandbox's is never dropped.

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// creds are a process's credentials as the kernel checks permission bits
// with them, in srt's user namespace (as /proc shows them).
type creds struct {
	uid, gid uint32 // the file system user and group
	groups   []uint32
	caps     bool // any effective capability
}

// readCreds reads the credentials of process pid from /proc.
func readCreds(pid int) (creds, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return creds{}, false
	}
	var c creds
	seen := 0
	for _, line := range strings.Split(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		f := strings.Fields(value)
		switch name {
		case "Uid", "Gid":
			if len(f) != 4 {
				return creds{}, false
			}
			id, err := strconv.ParseUint(f[3], 10, 32)
			if err != nil {
				return creds{}, false
			}
			if name == "Uid" {
				c.uid = uint32(id)
			} else {
				c.gid = uint32(id)
			}
			seen++
		case "Groups":
			for _, g := range f {
				id, err := strconv.ParseUint(g, 10, 32)
				if err != nil {
					return creds{}, false
				}
				c.groups = append(c.groups, uint32(id))
			}
			seen++
		case "CapEff":
			caps, err := strconv.ParseUint(strings.TrimSpace(value), 16, 64)
			if err != nil {
				return creds{}, false
			}
			c.caps = caps != 0
			seen++
		}
	}
	return c, seen == 4
}

func (c creds) inGroup(gid uint32) bool {
	if gid == c.gid {
		return true
	}
	for _, g := range c.groups {
		if g == gid {
			return true
		}
	}
	return false
}

// A fileMode is what the kernel checks a file's permission with.
type fileMode struct {
	mode, uid, gid uint32
	acl            bool // it has an access ACL
}

// permits says whether the bits of f let c do mask (unix.W_OK, X_OK):
// the owner's bits for its owner, else the group's for a member, else the
// others'. With an access ACL the group bits are its mask, the most any
// named user or group is granted.
func (c creds) permits(f fileMode, mask uint32) bool {
	var bits uint32
	switch {
	case f.uid == c.uid:
		bits = f.mode >> 6
	case f.acl:
		bits = f.mode>>3 | f.mode
	case c.inGroup(f.gid):
		bits = f.mode >> 3
	default:
		bits = f.mode
	}
	return bits&mask == mask
}

// modeOf is the fileMode of p in the sandbox (the last link followed
// when follow).
func (q *pendingCheck) modeOf(p string, follow bool) (fileMode, bool) {
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}
	if !follow {
		how.Flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat2(q.root, p, &how)
	if err != nil {
		return fileMode{}, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fileMode{}, false
	}
	f := fileMode{mode: st.Mode, uid: st.Uid, gid: st.Gid}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		_, err := unix.Getxattr("/proc/self/fd/"+strconv.Itoa(fd), "system.posix_acl_access", nil)
		f.acl = err == nil
	}
	return f, true
}

// hostAllows says whether the file's permissions let the process of c do
// access at p (what refused returned), so that the sandbox is what
// refused it. When a file cannot be read it says yes.
func (q *pendingCheck) hostAllows(access, p string, c creds) bool {
	if c.caps {
		return true
	}
	switch access {
	case "write", "truncate", "chmod", "times":
		f, ok := q.modeOf(p, q.follow)
		if !ok {
			return true
		}
		switch access {
		case "chmod":
			return f.uid == c.uid
		case "times":
			// Explicit times need the owner; the present time, write.
			return f.uid == c.uid || c.permits(f, unix.W_OK)
		}
		return c.permits(f, unix.W_OK)
	}
	dir, _ := parentOf(p)
	d, ok := q.modeOf(dir, true)
	if !ok {
		return true
	}
	if !c.permits(d, unix.W_OK|unix.X_OK) {
		return false
	}
	// In a sticky directory only the owner of the name or of the
	// directory removes or replaces it.
	if d.mode&unix.S_ISVTX == 0 || d.uid == c.uid {
		return true
	}
	switch access {
	case "remove", "rmdir", "rename", "rename-to":
		if f, ok := q.modeOf(p, false); ok {
			return f.uid == c.uid
		}
	}
	return true
}
