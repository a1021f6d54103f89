//go:build linux

package quarantine

// The only ways this package touches a tree the sandboxed command could
// write: relative to directory descriptors, never following a symbolic
// link, never opening anything but a directory (O_DIRECTORY) or, after
// lstat says so and fstat confirms it, a regular file, without blocking
// (O_NONBLOCK: a FIFO put in place between the two calls cannot hold the
// open), and reading at most a fixed size.

import (
	"errors"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/nofollow"
)

// maxRead is the most srt reads of one file: a protected file larger than
// this is compared by its identity alone.
const maxRead = 1 << 20

// An ident is what srt knows of a directory entry without reading it.
type ident struct {
	Dev, Ino     uint64
	Mode         uint32 // type and permissions (st_mode)
	Size         int64
	Mtime, Ctime int64 // ns since the epoch
}

func identOf(st *unix.Stat_t) ident {
	return ident{Dev: uint64(st.Dev), Ino: st.Ino, Mode: st.Mode, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
}

func (id ident) typ() uint32  { return id.Mode & unix.S_IFMT }
func (id ident) isDir() bool  { return id.typ() == unix.S_IFDIR }
func (id ident) isReg() bool  { return id.typ() == unix.S_IFREG }
func (id ident) isLink() bool { return id.typ() == unix.S_IFLNK }

// sameInode reports whether a and b are the same inode.
func (id ident) sameInode(b ident) bool { return id.Dev == b.Dev && id.Ino == b.Ino }

// unchanged reports whether a and b are the same inode with the same type,
// size and times: nothing was written to it in between, unless within one
// tick of the file system's clock (see Snapshot.recent).
func (id ident) unchanged(b ident) bool { return id == b }

// openRoot opens an absolute directory path without following any
// symbolic link on the way: a write root is a real path, and one that now
// goes through a link is not the directory the sandbox wrote.
func openRoot(p string) (int, error) { return nofollow.OpenDir(p) }

// openDirAt opens the directory name in parent, refusing a link or
// anything else.
func openDirAt(parent int, name string) (int, error) {
	return unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
}

// lstatAt is fstatat without following a link.
func lstatAt(parent int, name string) (ident, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return ident{}, err
	}
	return identOf(&st), nil
}

func fstatFD(fd int) (ident, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return ident{}, err
	}
	return identOf(&st), nil
}

// errNotRegular is returned for what is not (or is no longer) the regular
// file srt expected: srt reads nothing else.
var errNotRegular = errors.New("not a regular file")

// readAt reads the regular file name in parent, which lstat saw as want,
// up to limit bytes; more is an error. The file is opened without
// following a link and without blocking, and read only when it is still
// the inode lstat saw.
func readAt(parent int, name string, want ident, limit int64) ([]byte, error) {
	if !want.isReg() {
		return nil, errNotRegular
	}
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	got, err := fstatFD(fd)
	if err != nil {
		return nil, err
	}
	if !got.isReg() || !got.sameInode(want) {
		return nil, errNotRegular
	}
	if got.Size > limit {
		return nil, errTooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooLarge
	}
	return b, nil
}

var errTooLarge = errors.New("too large to read")

// readLinkAt is the target of the link name in parent.
func readLinkAt(parent int, name string) (string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(parent, name, buf)
		if err != nil {
			return "", err
		}
		if n < len(buf) {
			return string(buf[:n]), nil
		}
		if len(buf) >= unix.PathMax {
			return "", unix.ENAMETOOLONG
		}
		buf = make([]byte, 2*len(buf))
	}
}

// A dirent is one name of a directory, with its type as the directory
// reports it (unix.DT_*; DT_UNKNOWN on file systems that do not say).
type dirent struct {
	name string
	typ  uint8
}

// readDir lists the directory fd (which it does not close), at most limit
// names; more is errTooMany. It uses getdents directly: fd stays the
// caller's.
func readDir(fd int, limit int) ([]dirent, error) {
	if _, err := unix.Seek(fd, 0, 0); err != nil {
		return nil, err
	}
	var out []dirent
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		for b := buf[:n]; len(b) > 0; {
			// struct linux_dirent64: ino u64, off s64, reclen u16, type u8, name.
			if len(b) < 19 {
				return nil, errors.New("short directory entry")
			}
			reclen := int(uint16(b[16]) | uint16(b[17])<<8)
			if reclen < 19 || reclen > len(b) {
				return nil, errors.New("bad directory entry")
			}
			typ := b[18]
			nameb := b[19:reclen]
			for i, c := range nameb {
				if c == 0 {
					nameb = nameb[:i]
					break
				}
			}
			b = b[reclen:]
			name := string(nameb)
			if name == "." || name == ".." {
				continue
			}
			if len(out) >= limit {
				return nil, errTooMany
			}
			out = append(out, dirent{name, typ})
		}
	}
}

var errTooMany = errors.New("too many entries")

// searchable reports whether this user may search the directory name of
// parent (its x permission, by the effective ids): a directory it may not
// search is one the command, the same user without capabilities, could
// reach nothing inside.
func searchable(parent int, name string) bool {
	return unix.Faccessat(parent, name, unix.X_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) == nil
}

// writable reports whether this user may make names in the directory
// name of parent (its w permission, by the effective ids).
func writable(parent int, name string) bool {
	return unix.Faccessat(parent, name, unix.W_OK, unix.AT_EACCESS|unix.AT_SYMLINK_NOFOLLOW) == nil
}

// ownedHere reports whether the entry name of parent belongs to this
// user (by the effective id): its owner may change its permissions at
// will. An entry that cannot be looked at counts as this user's.
func ownedHere(parent int, name string) bool {
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return true
	}
	return int(st.Uid) == unix.Geteuid()
}
