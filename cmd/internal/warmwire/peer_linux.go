package warmwire

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// soPeerPIDFD is SO_PEERPIDFD (Linux 6.5): a pidfd of the process that
// connected, which names that process and no later one with its PID.
const soPeerPIDFD = 77

// SamePeer refuses the peer of the connected socket fd unless it is a
// process of this user in this process's user and PID namespaces: a
// sandbox's processes run in namespaces of their own, so no sandbox
// reaches the server, nor the server a sandbox's imitation of it.
//
// The namespaces are read through /proc/PID, and a PID can be reused: a
// sandboxed process that connects and exits could leave its PID to a
// process of the host's. Where the kernel gives the peer's pidfd, the
// peer must still be alive after its namespaces were read, so what was
// read was its own; a peer that has ended is refused. Older kernels
// (before 5.10 no pidfd signal, before 6.5 no SO_PEERPIDFD) get the
// check by PID alone.
func SamePeer(fd int) error {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return err
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not %d", cred.Uid, os.Getuid())
	}
	pidfd, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, soPeerPIDFD)
	switch {
	case err == nil:
		defer unix.Close(pidfd)
	case errors.Is(err, unix.ENOPROTOOPT):
		pidfd = -1
	default:
		return fmt.Errorf("the peer (pid %d) cannot be named: %v", cred.Pid, err)
	}
	for _, ns := range []string{"user", "pid"} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", cred.Pid, ns))
		if err1 != nil || err2 != nil || mine != theirs {
			return fmt.Errorf("the peer (pid %d) is in another %s namespace", cred.Pid, ns)
		}
	}
	if pidfd >= 0 {
		if err := unix.PidfdSendSignal(pidfd, 0, nil, 0); err != nil && !errors.Is(err, unix.ENOSYS) {
			return fmt.Errorf("the peer (pid %d) has ended: %v", cred.Pid, err)
		}
	}
	return nil
}
