package private

import (
	"os"
	"path/filepath"
	"strconv"
)

// TmpDir is the directory of this user's runs' temporary directories
// ($TMPDIR/srt-UID/tmp), which every sandbox sees as an empty directory
// of its own; the warm server's socket is there too.
func TmpDir() string {
	return filepath.Join(os.TempDir(), "srt-"+strconv.Itoa(os.Getuid()), "tmp")
}
