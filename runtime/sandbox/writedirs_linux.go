package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
)

// checkCwd refuses a working directory that a denyRead hides: bubblewrap
// could not enter it, and would only say "Can't chdir".
func checkCwd(p *policy.Policy, home, cwd string) error {
	d, ok := policy.CwdHidden(p, home, cwd)
	if !ok {
		return nil
	}
	return fmt.Errorf("the working directory %s is hidden by %s (denyRead %q): the command could not start there; run srt from another directory, or open this one again with an allowRead entry", cwd, originText(d.Origin), d.Path)
}

// createWriteDirs makes the allowWrite directories that do not exist yet,
// where policy.WriteDirs says srt creates them, as this user, and says on
// stderr what it made and what stays unwritable: bubblewrap cannot bind a
// directory that does not exist, and the command could not create it.
func createWriteDirs(p *policy.Policy, home, cwd string, stderr io.Writer) {
	for _, d := range policy.WriteDirs(p, home, cwd) {
		if _, err := os.Lstat(d.Path); !errors.Is(err, fs.ErrNotExist) {
			continue // there (the resolve step decides), or not to be inspected
		}
		if !d.Create {
			fmt.Fprintf(stderr, "srt: %s: %s does not exist, so the command cannot write it (%s); create it, or remove the entry\n", originText(d.Rule.Origin), d.Path, d.Why)
			continue
		}
		if err := mkdirBelow(d.Root, d.Path); err != nil {
			fmt.Fprintf(stderr, "srt: %s: %s does not exist and could not be created (%v), so the command cannot write it\n", originText(d.Rule.Origin), d.Path, err)
			continue
		}
		fmt.Fprintf(stderr, "srt: created %s for %s: it did not exist, and the command may write it\n", d.Path, originText(d.Rule.Origin))
	}
}

// mkdirBelow makes the directory p and its missing parents below root,
// walking by descriptor from root: a component that is a symbolic link,
// or not a directory, stops it (the directory is not made through a link
// the project could have planted).
func mkdirBelow(root, p string) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	at := root
	for _, name := range strings.Split(strings.TrimPrefix(p, root+"/"), "/") {
		at += "/" + name
		if err := unix.Mkdirat(fd, name, 0o777); err != nil && err != unix.EEXIST {
			unix.Close(fd)
			return fmt.Errorf("%s: %w", at, err)
		}
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return fmt.Errorf("%s is a symbolic link or not a directory", at)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		fd = next
	}
	unix.Close(fd)
	return nil
}
