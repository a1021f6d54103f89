// Package realpath says where a path of the host leads: the one reading
// of symbolic links that srt's host-side code shares (the resolve step's
// protected paths, git's files outside the repository, the hooks
// directories the check after the run protects, the state paths the macOS
// profile denies), so that the place protected before a run and the place
// checked after it cannot differ.
package realpath

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// MaxLinks is the most symbolic links followed on one path, as the kernel
// follows at most 40 (ELOOP beyond).
const MaxLinks = 40

// Resolve follows the absolute path p as the kernel does (a relative one
// is only cleaned), one name at a
// time: each symbolic link is replaced by its target (relative to the
// link's directory), and ".." goes up from where the names before it led,
// never folded as text. It returns the real path, the part that does not
// exist kept as written (a dangling link leads to where its target would
// be made), and the links met on the way, each as its real directory
// joined with its name: a command that replaced one would change where p
// leads. Past MaxLinks, or a link that cannot be read, the rest is kept as
// written from that link on.
func Resolve(p string) (real string, links []string) {
	return ResolveWith(p, os.Lstat)
}

// ResolveWith is Resolve with lstat in place of os.Lstat: a caller that
// reads the tree once for many paths (one resolution of a plan) answers
// for its lstat being os.Lstat's, as of when it read.
func ResolveWith(p string, lstat func(string) (fs.FileInfo, error)) (real string, links []string) {
	if !filepath.IsAbs(p) {
		return filepath.Clean(p), nil // no directory to start from
	}
	todo := strings.Split(p, "/")
	cur := "/"
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := lstat(next)
		if err != nil {
			return filepath.Join(append([]string{next}, todo...)...), links
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		links = append(links, next)
		target, err := os.Readlink(next)
		if err != nil || len(links) > MaxLinks {
			return filepath.Join(append([]string{next}, todo...)...), links
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return cur, links
}

// Of is the real path p leads to (Resolve without the links).
func Of(p string) string {
	real, _ := Resolve(p)
	return real
}
