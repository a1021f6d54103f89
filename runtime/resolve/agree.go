package resolve

// The two layers compared: every writable bind bubblewrap is given must
// lie within the second layer's write roots, which are resolved on their
// own (layers.go). A plan edited so that its mounts let the command write
// beyond them (the root bound writable, a write root moved up, a bind
// added) is refused before anything runs, whatever the kernel offers.

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"srt.dev/emit/bwrap"
)

// bwrapArity is how many words follow each bubblewrap option, as
// bubblewrap 0.11 reads them (parse_args_recurse in bubblewrap.c). An
// option it does not list cannot be told apart from its words, so a plan
// with one is refused while the second layer is on.
var bwrapArity = map[string]int{
	"--help": 0, "--version": 0, "--level-prefix": 0,
	"--unshare-all": 0, "--share-net": 0, "--unshare-user": 0, "--unshare-user-try": 0,
	"--unshare-ipc": 0, "--unshare-pid": 0, "--unshare-net": 0, "--unshare-uts": 0,
	"--unshare-cgroup": 0, "--unshare-cgroup-try": 0,
	"--disable-userns": 0, "--assert-userns-disabled": 0, "--clearenv": 0,
	"--new-session": 0, "--die-with-parent": 0, "--as-pid-1": 0,

	"--argv0": 1, "--chdir": 1, "--remount-ro": 1, "--overlay-src": 1,
	"--tmp-overlay": 1, "--ro-overlay": 1, "--proc": 1, "--exec-label": 1,
	"--file-label": 1, "--dev": 1, "--tmpfs": 1, "--mqueue": 1, "--dir": 1,
	"--lock-file": 1, "--sync-fd": 1, "--block-fd": 1, "--userns-block-fd": 1,
	"--info-fd": 1, "--json-status-fd": 1, "--seccomp": 1, "--add-seccomp-fd": 1,
	"--userns": 1, "--userns2": 1, "--pidns": 1, "--unsetenv": 1, "--uid": 1,
	"--gid": 1, "--hostname": 1, "--cap-add": 1, "--cap-drop": 1, "--perms": 1,
	"--size": 1,

	"--bind": 2, "--bind-try": 2, "--dev-bind": 2, "--dev-bind-try": 2,
	"--ro-bind": 2, "--ro-bind-try": 2, "--bind-fd": 2, "--ro-bind-fd": 2,
	"--file": 2, "--bind-data": 2, "--ro-bind-data": 2, "--symlink": 2,
	"--setenv": 2, "--chmod": 2,

	"--overlay": 3,
}

// A writable mount is one bubblewrap option that lets the command write
// host files: the host paths it writes and where it lands in the sandbox.
type writableMount struct {
	words []string // the option and its words
	srcs  []string // host paths the command writes through it
	dest  string   // where it lands, as the sandbox sees it
	line  int      // the line of linux/bwrap.args it came from
}

// writableMounts reads bubblewrap's arguments as bubblewrap does and
// returns the mounts that let the command write host files: --bind,
// --dev-bind and their -try forms, and --overlay (its upper and work
// directories). Read-only binds, a tmpfs, a fresh /dev, /proc or mqueue,
// and the files bubblewrap copies in (--file, --bind-data) write no host
// file. An option whose words the check cannot see (--args, --bind-fd),
// one it does not know, and a word where an option should be (which ends
// bubblewrap's options: what follows, srt's init step among it, would not
// run as srt means it) are refused.
func (r *resolver) writableMounts(args []string, lines []int) ([]writableMount, error) {
	var out []writableMount
	for i := 0; i < len(args); {
		opt, line := args[i], lines[i]
		n, known := bwrapArity[opt]
		switch {
		case opt == "--args" || opt == "--bind-fd":
			return nil, r.placed(line, fmt.Errorf("%s: the second layer (Landlock) cannot be compared with what bubblewrap would read from a descriptor: bind what the command may write by its path, which @landlock-write lines can name", opt))
		case !strings.HasPrefix(opt, "--") || opt == "--":
			return nil, r.placed(line, fmt.Errorf("%q where bubblewrap expects an option: it would end bubblewrap's options, and the command would not start through srt's init step, which applies the second layer (Landlock); remove it, or recompile the plan with srtc compile", opt))
		case !known:
			return nil, r.placed(line, fmt.Errorf("%s: srt does not know this bubblewrap option, so it cannot tell whether it makes host files writable beyond the second layer (Landlock); remove it, or recompile the plan with srtc compile", opt))
		case i+n >= len(args):
			return nil, r.placed(line, fmt.Errorf("%s takes %d arguments", opt, n))
		}
		words := args[i : i+1+n]
		switch opt {
		case "--bind", "--bind-try", "--dev-bind", "--dev-bind-try":
			out = append(out, writableMount{words: words, srcs: []string{words[1]}, dest: words[2], line: line})
		case "--overlay":
			out = append(out, writableMount{words: words, srcs: []string{words[1], words[2]}, dest: words[3], line: line})
		}
		i += 1 + n
	}
	return out, nil
}

// agree refuses a plan whose writable mounts reach beyond its second
// layer: every host path a writable mount writes must lie at or below the
// host path of one of the second layer's write roots (the run's TMPDIR
// among them, when a @landlock-write line names it), and where it lands
// at or below a path of Landlock.Write, symbolic links resolved as they
// are on the host. A source bubblewrap would reach through /proc is
// refused, but for the descriptors of the write roots the resolver opened
// itself (Host.BindFD), which stand for their roots. The one exception
// is "--bind /proc /proc" (enableWeakerNestedSandbox): the kernel's
// process file system, no stored file, where Landlock still refuses every
// write outside its grants. Nothing to compare with "@landlock off".
func (r *resolver) agree(steps []bwrap.Step) error {
	l := r.res.Landlock
	if l == nil {
		return nil // @landlock off: the mounts alone, as the plan says
	}
	mounts, err := r.writableMounts(r.res.Args, r.res.Lines)
	if err != nil {
		return err
	}
	for _, m := range mounts {
		if m.words[0] == "--bind" && m.srcs[0] == "/proc" && m.dest == "/proc" {
			continue
		}
		for _, src := range m.srcs {
			p, ok := r.hostOf(src)
			if !ok {
				return r.placed(m.line, fmt.Errorf("%q: the second layer (Landlock) cannot be compared with what bubblewrap finds through %s (a descriptor, another process's files): bind what the command may write by its path; recompile the plan with srtc compile, or undo the edit", strings.Join(m.words, " "), src))
			}
			if !below(p, r.landlockHost) {
				return r.disagree(steps, m, p)
			}
		}
		dest := filepath.Clean(m.dest)
		landing := dest
		if r.tmp == nil || !within(dest, r.tmp.dest) {
			landing = r.realOf(dest)
		}
		for _, p := range []string{dest, landing} {
			if !below(p, l.Write) {
				return r.disagree(steps, m, p)
			}
		}
	}
	return nil
}

// hostOf is the host path bubblewrap binds from src: the write root a
// descriptor of the resolver's own stands for (Host.BindFD), or src with
// its symbolic links resolved (as far as it exists); false for a path
// through /proc, whose magic links (a descriptor of bubblewrap's, another
// process's root) no path of this process can vouch for.
func (r *resolver) hostOf(src string) (string, bool) {
	src = filepath.Clean(src)
	if r.h.BindFD > 0 {
		for w, f := range r.rootFiles {
			if i := slices.Index(r.res.BindFiles, f); i >= 0 && src == "/proc/self/fd/"+strconv.Itoa(r.h.BindFD+i) {
				return w, true
			}
		}
	}
	p := r.realOf(src)
	if real, err := filepath.EvalSymlinks(src); err == nil {
		p = real
	}
	if within(src, "/proc") || within(p, "/proc") {
		return "", false
	}
	return p, true
}

// below reports whether p is at or below one of roots.
func below(p string, roots []string) bool {
	for _, w := range roots {
		if within(p, w) {
			return true
		}
	}
	return false
}

// disagree is the refusal of a mount m that makes path writable outside
// the second layer: which line, what it binds, what the second layer
// grants, and what to do.
func (r *resolver) disagree(steps []bwrap.Step, m writableMount, path string) error {
	from, _ := r.hostOf(m.srcs[0])
	what := fmt.Sprintf("%q binds %s writable", strings.Join(m.words, " "), from)
	if filepath.Clean(m.dest) != from {
		what += " at " + m.dest
	}
	if text := lineText(steps, m.line); text != "" && !strings.HasPrefix(text, "--") {
		what = text + ": " + what
	}
	var roots []string
	for i, p := range r.res.Landlock.Write {
		if r.res.Landlock.Lines[i] != r.res.Landlock.Line {
			roots = append(roots, p)
		}
	}
	has := list(roots, 5) + " (its @landlock-write lines) and the grants of its @landlock line"
	if len(roots) == 0 {
		has = "it has none but the grants of its @landlock line (the plan has no @landlock-write line, as a plan compiled by an older srtc has none)"
	}
	return r.placed(m.line, fmt.Errorf("the two layers disagree: %s, and %s is outside the second layer's (Landlock's) write roots: %s; srt runs no plan whose mounts reach beyond its second layer: recompile the plan with srtc compile, or undo the edit", what, path, has))
}

// lineText is the step of line n, as the plan writes it ("" for srt's
// own arguments).
func lineText(steps []bwrap.Step, n int) string {
	for _, s := range steps {
		if s.Line != n || n == 0 {
			continue
		}
		if s.Args != nil {
			return strings.Join(s.Args, " ")
		}
		if s.Operand == "" {
			return "@" + s.Name()
		}
		return "@" + s.Name() + " " + s.Operand
	}
	return ""
}

// list names the first n of paths, and how many more there are.
func list(paths []string, n int) string {
	if len(paths) <= n {
		return strings.Join(paths, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(paths[:n], ", "), len(paths)-n)
}

// placed places err at a line of the plan's bwrap.args (Host.Plan), or
// at the plan when line is 0.
func (r *resolver) placed(line int, err error) error {
	name := r.h.Plan
	if name == "" {
		name = "bwrap.args"
	}
	if line > 0 {
		return fmt.Errorf("%s:%d: %w", name, line, err)
	}
	if r.h.Plan != "" {
		return fmt.Errorf("%s: %w", name, err)
	}
	return err
}

// A Mount is one bubblewrap option that mounts at Dest, with its words
// and the line of linux/bwrap.args it came from (0 for srt's own).
type Mount struct {
	Words []string
	Dest  string
	Line  int
}

// mountDest is, for each bubblewrap option that mounts something (or
// changes a mount: --remount-ro), the index of its destination among
// its words.
var mountDest = map[string]int{
	"--bind": 2, "--bind-try": 2, "--dev-bind": 2, "--dev-bind-try": 2,
	"--ro-bind": 2, "--ro-bind-try": 2, "--bind-fd": 2, "--ro-bind-fd": 2,
	"--file": 2, "--bind-data": 2, "--ro-bind-data": 2,
	"--remount-ro": 1, "--tmpfs": 1, "--dev": 1, "--proc": 1, "--mqueue": 1,
	"--overlay": 3, "--tmp-overlay": 1, "--ro-overlay": 1,
}

// MountAt is the mount of bubblewrap's arguments args (lines: the line
// of each) that decides what p is in the sandbox: the last whose
// destination is p or a directory above it, as bubblewrap mounts them in
// order, each over what came before. false when no mount covers p or
// args cannot be read as bubblewrap reads them.
func MountAt(args []string, lines []int, p string) (Mount, bool) {
	var m Mount
	found := false
	for i := 0; i < len(args); {
		n, known := bwrapArity[args[i]]
		if !known || i+n >= len(args) {
			return m, found
		}
		if d, ok := mountDest[args[i]]; ok {
			dest := filepath.Clean(args[i+d])
			if within(p, dest) {
				m, found = Mount{Words: args[i : i+1+n], Dest: dest, Line: lines[i]}, true
			}
		}
		i += 1 + n
	}
	return m, found
}
