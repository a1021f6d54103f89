//go:build linux

package resolve

import "golang.org/x/sys/unix"

// canCreateIn reports whether this process may create entries in dir, as
// bubblewrap must to make a mount point there.
func canCreateIn(dir string) bool {
	return unix.Access(dir, unix.W_OK|unix.X_OK) == nil
}
