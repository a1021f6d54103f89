//go:build unix

package trust

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/private"
)

// Lock takes the lock of the record for writing a plan directory and
// recording its plan (srtc compile), or reading one and recording it (srt
// trust): two of them at once, in the same directory, then leave the
// record naming the plan that is there, not the other one. unlock
// releases it. Lock fails where the record cannot be written (inside a
// sandbox), as Trust then does.
func Lock() (unlock func(), err error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	if err := private.Dir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
