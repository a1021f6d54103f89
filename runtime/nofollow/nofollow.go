// Package nofollow opens paths of the host without following a symbolic
// link anywhere on the way. srt reaches the trees a sandboxed command could
// write (its write roots, the check after the run) only this way: a link
// the command planted in one run must not widen or redirect a later one.
package nofollow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"srt.dev/internal/untrusted"
)

// A LinkError is a path reached through a symbolic link: Link is the
// first component of Path that is one, Target what it points to.
type LinkError struct {
	Path, Link, Target string
}

// Error names the link and what it points to; a sandboxed command may
// have written both, and they are shown through untrusted.Quote.
func (e *LinkError) Error() string {
	target := untrusted.Quote(e.Target)
	if e.Link == e.Path {
		return fmt.Sprintf("%s is a symbolic link (to %s)", untrusted.Quote(e.Path), target)
	}
	return fmt.Sprintf("%s is reached through a symbolic link: %s -> %s", untrusted.Quote(e.Path), untrusted.Quote(e.Link), target)
}

// FirstLink returns the first component of the absolute path p that is a
// symbolic link, as a LinkError, or nil when there is none (or p cannot
// be examined that far).
func FirstLink(p string) *LinkError {
	p = filepath.Clean(p)
	at := ""
	for _, name := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if name == "" {
			continue
		}
		at += "/" + name
		fi, err := os.Lstat(at)
		if err != nil {
			return nil
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, _ := os.Readlink(at)
			return &LinkError{Path: p, Link: at, Target: target}
		}
	}
	return nil
}
