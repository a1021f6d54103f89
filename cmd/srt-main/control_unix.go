//go:build !windows

package main

import (
	"fmt"

	"golang.org/x/sys/unix"

	"srt.dev/internal/pollread"
)

// openControl checks that fd is a descriptor srt inherited, open and
// readable (a zero-length read, as the reference probes it), and keeps it
// from the sandboxed command: it is closed on exec, so neither bubblewrap
// nor the command inherits it. An inherited descriptor is one without
// close-on-exec: it survived srt's exec. Go opens every descriptor of its
// own close-on-exec (the runtime's cgroup files and poller among them),
// so a number the caller left closed is refused, never read from. It is
// read through pollread, whose reading srt stops when the run ends, the
// writer done or not.
func openControl(fd int) (*pollread.Reader, error) {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC != 0 {
		return nil, fmt.Errorf("descriptor %d is not open", fd)
	}
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_ACCMODE == unix.O_WRONLY {
		return nil, fmt.Errorf("descriptor %d is open for writing only", fd)
	}
	if _, err := unix.Read(fd, nil); err != nil {
		return nil, fmt.Errorf("descriptor %d cannot be read (%v)", fd, err)
	}
	unix.CloseOnExec(fd)
	return pollread.New(fd)
}
