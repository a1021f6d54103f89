package warmwire

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// SamePeer refuses the peer of the connected socket fd unless it is a
// process of this user in this process's user and PID namespaces: a
// sandbox's processes run in namespaces of their own, so no sandbox
// reaches the server, nor the server a sandbox's imitation of it.
func SamePeer(fd int) error {
	cred, err := unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
	if err != nil {
		return err
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not %d", cred.Uid, os.Getuid())
	}
	for _, ns := range []string{"user", "pid"} {
		mine, err1 := os.Readlink("/proc/self/ns/" + ns)
		theirs, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", cred.Pid, ns))
		if err1 != nil || err2 != nil || mine != theirs {
			return fmt.Errorf("the peer (pid %d) is in another %s namespace", cred.Pid, ns)
		}
	}
	return nil
}
