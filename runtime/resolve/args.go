package resolve

// The arguments of the steps that are not file-system steps: bubblewrap
// options as written, environment steps, kernel masks, seccomp.

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
)

// emit writes the arguments in the plan's order: a --option line word for
// word (the symbolic roots filled in), a directive through its resolver.
func (r *resolver) emit(steps []bwrap.Step) error {
	for _, s := range steps {
		r.cur = s.Line
		if s.Args != nil {
			for _, a := range s.Args {
				r.add(r.expandArg(a))
			}
			if len(s.Args) == 3 && (s.Args[0] == "--ro-bind" || s.Args[0] == "--bind") && s.Args[1] == "/" && s.Args[2] == "/" {
				// Also after "--bind / /" (the file system policy disabled):
				// srt's own files are read-only there too.
				r.rootLine = s.Line
				r.emitFilesystem()
			}
			continue
		}
		name := s.Directive
		if d := directives[name]; d.emit != nil {
			if err := d.emit(r, s, steps); err != nil {
				return stepError(s, err)
			}
		}
	}
	return nil
}

func (r *resolver) add(args ...string) {
	r.res.Args = append(r.res.Args, args...)
	for range args {
		r.res.Lines = append(r.res.Lines, r.cur)
	}
}

// kernelMask hides a kernel interface of /proc or /sys that exists on this
// host (the sandbox's /proc and /sys show the same kernel): an empty
// read-only tmpfs over a directory, /dev/null over anything else. A path
// this kernel does not have needs nothing; one srt cannot look at stops the
// run rather than leaving it uncovered.
func (r *resolver) kernelMask(p string) error {
	if !strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/sys/") {
		return fmt.Errorf("@%s %s: only paths below /proc and /sys can be masked this way", bwrap.KernelMask, p)
	}
	fi, err := r.lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.note("@%s %s: not on this host, nothing to hide", bwrap.KernelMask, p)
	case err != nil:
		return fmt.Errorf("@%s %s: cannot tell whether this kernel has it, so it cannot be hidden: %w", bwrap.KernelMask, p, err)
	case fi.IsDir():
		r.add("--tmpfs", p, "--remount-ro", p)
	default:
		r.add("--ro-bind", "/dev/null", p)
	}
	return nil
}

// expandArg is a word of a --option line with a symbolic root filled in,
// if it is a policy path that starts at one; any other word as written.
func (r *resolver) expandArg(a string) string {
	if p, err := policy.ParsePath(a); err != nil || !p.Root().Symbolic() {
		return a
	}
	if s, err := r.expand(a); err == nil {
		return s
	}
	return a
}

// gitSafe marks directories safe.directory through GIT_CONFIG_* variables
// (docs/reference.md#linux-environment): each directory and everything below it, or "*" for
// more than eight.
func (r *resolver) gitSafe(dirs []string) {
	n := r.h.GitConfigCount
	for _, v := range policy.GitSafeValues(dirs) {
		r.add("--setenv", fmt.Sprintf("GIT_CONFIG_KEY_%d", n), "safe.directory")
		r.add("--setenv", fmt.Sprintf("GIT_CONFIG_VALUE_%d", n), v)
		n++
	}
	r.add("--setenv", "GIT_CONFIG_COUNT", strconv.Itoa(n))
}
