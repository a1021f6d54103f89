//go:build linux

package nofollow

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// how resolves without following a link, a magic link (/proc/self/fd/N)
// included; the last component too, unless the flags say O_NOFOLLOW.
const how = unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// Open opens the absolute path p as an O_PATH descriptor, close-on-exec,
// following no symbolic link, the last component included: what it
// returns is the object at p, not one a link leads to. A link on the way
// is a *LinkError; a missing component, fs.ErrNotExist.
func Open(p string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: how})
	if err != nil {
		return nil, linkError(p, err)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// OpenDir opens the absolute directory path p for reading (O_DIRECTORY,
// O_NONBLOCK, close-on-exec), following no symbolic link on the way.
func OpenDir(p string) (int, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, p, &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK,
		Resolve: how,
	})
	if err != nil {
		return -1, linkError(p, err)
	}
	return fd, nil
}

// linkError names the link behind ELOOP, when there is one to name.
func linkError(p string, err error) error {
	if errors.Is(err, unix.ELOOP) {
		if le := FirstLink(p); le != nil {
			return le
		}
	}
	return &os.PathError{Op: "open", Path: p, Err: err}
}
