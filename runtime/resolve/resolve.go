// Package resolve turns a symbolic bubblewrap plan (package emit/bwrap) into
// the concrete bubblewrap arguments for this host: it fills in the home and
// working directories, and decides each @ step against the file system as
// it is now (docs/reference.md#bwrap-order, docs/reference.md#write-roots): which paths exist, whether they are
// files or directories, where symlinks lead, what globs match, and what the
// mandatory-deny scan finds below the working directory.
//
// Resolve never weakens a plan silently: a step it cannot enforce is an
// error, and everything it leaves out is explained in Result.Notes.
package resolve

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/runtime/realpath"
)

// MaxArgs is the most arguments bubblewrap accepts (it refuses more than
// 9000 words).
const MaxArgs = 9000

// Host is what Resolve needs to know of this run.
type Host struct {
	// Home and Cwd are absolute; they replace ${HOME} and ${CWD}.
	Home, Cwd string
	// EmptyDir is an empty directory, outside the user's tree and not
	// writable by anyone else, used as the source of placeholder
	// directories. Needed only when a placeholder directory is.
	EmptyDir string
	// EmptyFile is an empty regular file, kept as EmptyDir is: the source
	// of the placeholders of git's own files (GitHost), which git on the
	// host and in the sandbox reads while the run lasts and could not
	// read as a directory. "" protects those with EmptyDir too.
	EmptyFile string
	// SeccompFD is the descriptor bubblewrap reads the seccomp program
	// from; a plan with @seccomp and no descriptor is an error.
	SeccompFD int
	// ProxyEnv are the NAME=VALUE pairs of @proxy-env.
	ProxyEnv []string
	// MaskValue returns what a masked variable is set to (its value with
	// the secrets replaced), or false to leave the variable as the
	// command's environment has it.
	MaskValue func(name string) (string, bool)
	// GitConfigCount is the caller's GIT_CONFIG_COUNT (0 if unset); the
	// safe.directory entries are numbered after it.
	GitConfigCount int
	// MaskedCopy returns a file holding what the command sees of the
	// masked credential file path (the secrets replaced by stand-ins),
	// outside the user's tree; operand is the @mask-file step's operand,
	// which names the rule. When nil, or when it fails, the file is hidden
	// instead, which is stricter; "" and no error leave the file as it is
	// (nothing in it is secret by the rule); a *StopError stops the
	// resolution.
	MaskedCopy func(operand, path string) (string, error)
	// GitHost are git's files outside the repository on this host
	// (gitconfig.ReadOutside: absolute, as git spells them): those a write
	// root covers are protected, whatever the plan says, unless the
	// file-system policy is disabled (see collectGitHost).
	GitHost []string
	// State are the host paths of srt's own files, by kind
	// (policy.SrtState): read-only in the sandbox, or hidden, whatever the
	// plan says; Resolve applies every kind it knows, with or without the
	// plan's @srt-state step. A read-only path that does not exist is not
	// made (a placeholder would stand where srt looks for it): the caller
	// watches it (Result.Watch).
	State map[policy.StateKind][]string
	// TmpDir is a new, empty directory of this run, private to the user,
	// bound writable at the @private-tmp operand (the command's TMPDIR).
	// Needed only when the plan has that step.
	TmpDir string
	// BindFD, when above 0, is the descriptor the first of
	// Result.BindFiles has in bubblewrap (the next one BindFD+1, and so
	// on): each write root is bound from the object opened without
	// following a link (/proc/self/fd/N), not looked up again by name.
	// 0 binds write roots by their paths.
	BindFD int
	// Plan names the plan's bwrap.args in the messages of the comparison
	// of the two layers ("" for bwrap.args).
	Plan string
	// Placeholders are paths that bubblewrap made on this host as mount
	// points for a sandbox still running (Result.Placeholders of its
	// resolution): this resolution takes them, and what is below them,
	// as absent, as that sandbox's resolution found them.
	Placeholders []string
	// Root is set when bubblewrap runs as root (srt run by root). With a
	// plan that drops every capability (--cap-drop ALL), a directory
	// where root's classes may not create names, by the permission bits,
	// takes no mount point: the command cannot create the name there, and
	// bubblewrap, whose capabilities in its user namespace hold only over
	// root's own files, could not make the mount point (canCreateIn); a
	// write root there gets a warning. Unset, every directory this
	// process may write takes one: the stricter reading.
	Root bool
}

// dropsAllCaps reports whether the plan gives the command no capability.
func dropsAllCaps(steps []bwrap.Step) bool {
	for _, s := range steps {
		for i := 0; i+1 < len(s.Args); i++ {
			if s.Args[i] == "--cap-drop" && s.Args[i+1] == "ALL" {
				return true
			}
		}
	}
	return false
}

// StopError, returned by Host.MaskedCopy, stops the resolution: the run
// must not start (onExtractNoMatch "error").
type StopError struct{ Err error }

func (e *StopError) Error() string { return e.Err.Error() }
func (e *StopError) Unwrap() error { return e.Err }

// Result is a resolved plan.
type Result struct {
	// Args are the bubblewrap arguments, without "--" and the command.
	Args []string
	// Lines are, for each of Args, the Line of the step it came from (the
	// line of linux/bwrap.args); 0 for what the runtime added itself.
	Lines []int
	// Placeholders are host paths that do not exist and that bubblewrap
	// will create as mount points; the caller removes them afterwards.
	Placeholders []string
	// Notes say what was left out and why, for the debug log.
	Notes []string
	// Warnings say what the user should know before the command runs.
	Warnings []string
	// Watch are srt's own files (Host.State) that do not exist, in a
	// place the command can write: the caller checks after the run that
	// none was created.
	Watch []string
	// GitWatch are git's files outside the repository (Host.GitHost) that
	// the command could change, existing or not, and each symbolic link
	// on the way to one, as their real directories joined with their
	// names: the caller checks after the run that none is new or changed,
	// and that no link was put on the way to one.
	GitWatch []string
	// WriteRoots are the host directories (and files) the command can
	// write that outlive the run: the real paths bound writable, but for
	// the run's own TMPDIR, which is removed with it.
	WriteRoots []string
	// Landlock is the plan's second layer, nil when it has none.
	Landlock *Landlock
	// Limits are the plan's resource limits, in its order.
	Limits []Limit
	// BindFiles are the write roots bubblewrap binds from a descriptor
	// (Host.BindFD), in the order of their descriptors; Close closes
	// them.
	BindFiles []*os.File
}

// Close closes the descriptors of the write roots (BindFiles), once
// bubblewrap has them or will not start.
func (res *Result) Close() {
	for _, f := range res.BindFiles {
		f.Close()
	}
	res.BindFiles = nil
}

// Resolve resolves a plan for h.
func Resolve(steps []bwrap.Step, h Host) (*Result, error) {
	if !filepath.IsAbs(h.Home) || !filepath.IsAbs(h.Cwd) {
		return nil, fmt.Errorf("resolve: home %q and working directory %q must be absolute", h.Home, h.Cwd)
	}
	r := &resolver{h: h, res: &Result{}, from: map[string]int{}, rootFiles: map[string]*os.File{}, realAnchor: map[string]string{}, seen: map[string]lstatResult{}}
	// The write roots opened but not handed to bubblewrap are closed; on
	// failure, every one.
	defer func() {
		for _, f := range r.rootFiles {
			if !slices.Contains(r.res.BindFiles, f) {
				f.Close()
			}
		}
	}()
	res, err := r.resolve(steps)
	if err != nil {
		r.res.BindFiles = nil
		return nil, err
	}
	return res, nil
}

func (r *resolver) resolve(steps []bwrap.Step) (*Result, error) {
	if err := checkSteps(steps); err != nil {
		return nil, err
	}
	r.rootNoCaps = r.h.Root && dropsAllCaps(steps)
	if err := r.collect(steps); err != nil {
		return nil, err
	}
	if err := r.emit(steps); err != nil {
		return nil, err
	}
	if err := r.landlock(steps); err != nil {
		return nil, err
	}
	if err := r.agree(steps); err != nil {
		return nil, err
	}
	for _, w := range r.writeRoots {
		if !r.isTmp(w) && !(r.rootBound && w == "/") {
			r.res.WriteRoots = append(r.res.WriteRoots, w)
			if why := foreignRoot(w, r.rootNoCaps); why != "" {
				r.res.Warnings = append(r.res.Warnings, why)
			}
		}
	}
	for _, a := range r.res.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("resolve: %q contains a NUL byte, which no command line can carry", a)
		}
	}
	if len(r.res.Args) > MaxArgs {
		if n := len(r.scanDenies); n > MaxArgs/8 {
			// Names the scan found, one bind each: a sandboxed run may
			// have left them (a shell start-up file in every directory).
			return nil, fmt.Errorf("resolve: %d bubblewrap arguments, and bubblewrap accepts at most %d: the scan for protected names found %d below %s (such as %q), each bound read-only on its own. If a sandboxed run wrote them, run \"srt quarantine check\" (it moves what runs left unchecked) or remove them; otherwise lower mandatoryDenySearchDepth", len(r.res.Args), MaxArgs, n, r.h.Cwd, r.scanDenies[0])
		}
		return nil, fmt.Errorf("resolve: %d bubblewrap arguments; bubblewrap accepts at most %d (narrow the globs or the lists)", len(r.res.Args), MaxArgs)
	}
	return r.res, nil
}

type resolver struct {
	h   Host
	res *Result
	// rootNoCaps: bubblewrap runs as root and the command has no
	// capability (see Host.Root).
	rootNoCaps bool

	writeRoots []string   // real paths bound writable, in order
	readDeny   []denyUnit // sorted shallow first
	allowRead  []string   // names (expanded, cleaned) that reopen reads
	denyWrite  []string   // resolved destinations, in order, deduplicated
	masks      []mount    // credential file masks: copy -> real file
	scanDenies []string
	usedEmpty  bool
	usedFile   bool
	tmp        *mount // the run's TMPDIR: host directory -> its place inside

	// cur is the line of the step being resolved; from maps a kind and a
	// path ("w/path": write root, "d": read deny, "a": read allow, "m":
	// mask, "x": write deny, "p": pin, "g": git's file outside the
	// repository, watched) to the line of the step behind it.
	cur      int
	from     map[string]int
	rootLine int // the line of --ro-bind / / (or --bind / /)
	// rootBound: the plan binds "/" writable itself (the file system
	// policy disabled).
	rootBound bool
	gitDone   bool // the safe directories are written
	// rootFiles are the write roots, opened without following a link
	// (addWriteRoot), by real path; realAnchor the real paths of the home
	// and working directories (anchored).
	rootFiles  map[string]*os.File
	realAnchor map[string]string

	// seen are the lstat results of this resolution, by path (hostLstat):
	// each path is read once, and every step decides on the same reading.
	seen map[string]lstatResult

	// landlockHost are the host paths behind the second layer's write
	// roots (Landlock.Write without the grants, which are the sandbox's
	// own): where a writable bind's source must lie.
	landlockHost []string
}

// mark records that the step being resolved named p as kind.
func (r *resolver) mark(kind byte, p string) {
	k := string(kind) + p
	if _, ok := r.from[k]; !ok {
		r.from[k] = r.cur
	}
}

// at makes the next arguments come from the step that named p as kind
// (the root mount's line when none did).
func (r *resolver) at(kind byte, p string) *resolver {
	if l, ok := r.from[string(kind)+p]; ok {
		r.cur = l
	} else {
		r.cur = r.rootLine
	}
	return r
}

func (r *resolver) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

// expand is a path operand on this host: its symbolic root filled in,
// cleaned. An absolute operand need not be spelled clean (a concrete
// plan holds the directories as they were given); one that starts at no
// root, or at a root this host has no directory for (a Windows reading's),
// is an error.
func (r *resolver) expand(operand string) (string, error) {
	p, err := policy.ParsePath(operand)
	if err != nil {
		if filepath.IsAbs(operand) {
			return filepath.Clean(operand), nil
		}
		return "", err
	}
	s, ok := p.Expand(r.h.Home, r.h.Cwd)
	if !ok {
		return "", fmt.Errorf("%s: this host has no directory for %s", operand, p.Root())
	}
	return filepath.Clean(s), nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lstat is os.Lstat, but for the host's placeholders (Host.Placeholders),
// which do not exist to the resolution.
func (r *resolver) lstat(p string) (fs.FileInfo, error) {
	if r.placeholder(p) {
		return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
	}
	return r.hostLstat(p)
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

// hostLstat is os.Lstat as this resolution first read it: the real paths
// of many protected names pass through the same directories, which are
// read once. Whatever the resolution makes on the host itself (a masked
// copy) forgets what was read (forget).
func (r *resolver) hostLstat(p string) (fs.FileInfo, error) {
	if v, ok := r.seen[p]; ok {
		return v.fi, v.err
	}
	fi, err := os.Lstat(p)
	r.seen[p] = lstatResult{fi, err}
	return fi, err
}

// forget drops what hostLstat read.
func (r *resolver) forget() { clear(r.seen) }

// realpath is realpath.Resolve, reading through hostLstat.
func (r *resolver) realpath(p string) (real string, links []string) {
	return realpath.ResolveWith(p, r.hostLstat)
}

// realOf is the real path p leads to (realpath without the links).
func (r *resolver) realOf(p string) string {
	real, _ := r.realpath(p)
	return real
}

// stat is os.Stat, but for the host's placeholders (see lstat).
func (r *resolver) stat(p string) (fs.FileInfo, error) {
	if r.placeholder(p) {
		return nil, &fs.PathError{Op: "stat", Path: p, Err: fs.ErrNotExist}
	}
	return os.Stat(p)
}

func (r *resolver) placeholder(p string) bool {
	for _, q := range r.h.Placeholders {
		if within(p, q) {
			return true
		}
	}
	return false
}

// within reports whether p is base or below it.
func within(p, base string) bool {
	if base == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == base || strings.HasPrefix(p, base+"/")
}

func depth(p string) int { return strings.Count(strings.TrimSuffix(p, "/"), "/") }
