//go:build unix

// Package private makes and checks directories that belong to this user
// alone, for files whose content srt trusts: placeholder records and the
// cache of compiled policies.
package private

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Dir creates dir (mode 0700) and checks that it and its parent belong to
// this user and that nobody else can write to them.
func Dir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, d := range []string{dir, filepath.Dir(dir)} {
		var st unix.Stat_t
		if err := unix.Lstat(d, &st); err != nil {
			return err
		}
		if int(st.Uid) != os.Getuid() || st.Mode&0o022 != 0 || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return fmt.Errorf("%s is not a directory private to this user: refusing to trust what is in %s", d, dir)
		}
	}
	return nil
}
