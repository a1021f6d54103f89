//go:build linux

package placeholders

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const errBusy = unix.EBUSY

// Cgroups records the cgroup directories made for the run's resource
// limits: removed when it has ended, by the run itself or by the sweep
// after it (a reaper's, when srt was killed). Each must be one CgroupName
// accepts.
func (run *Run) Cgroups(dirs []string) error {
	for _, d := range dirs {
		if !CgroupName(d) {
			return fmt.Errorf("%s is not a cgroup of a run", d)
		}
	}
	run.rec.Cgroups = append([]string(nil), dirs...)
	return run.write()
}

// CgroupName reports whether d names a cgroup directory a run makes: clean
// and absolute, below /sys/fs/cgroup, its last element starting "srt-".
// Nothing else is ever removed as one.
func CgroupName(d string) bool {
	return filepath.IsAbs(d) && filepath.Clean(d) == d && strings.HasPrefix(d, "/sys/fs/cgroup/") && strings.HasPrefix(filepath.Base(d), "srt-")
}

// RemoveCgroups removes the cgroup directories of a run once the
// processes in them are gone (until then the kernel refuses: EBUSY),
// waiting up to 2 s for them; one already gone is no error, one that
// CgroupName refuses is not touched.
func RemoveCgroups(dirs []string) error {
	var errs []error
	deadline := time.Now().Add(2 * time.Second)
	for _, d := range dirs {
		if !CgroupName(d) {
			errs = append(errs, fmt.Errorf("%s is not a cgroup of a run", d))
			continue
		}
		for {
			// A cgroup directory holds only the kernel's files: rmdir
			// removes it once it has no processes and no children.
			err := os.Remove(d)
			if err == nil || errors.Is(err, fs.ErrNotExist) {
				break
			}
			if !errors.Is(err, errBusy) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}
