//go:build linux

// Package placeholders removes the mount points bubblewrap creates in the
// user's tree for protected names that do not exist yet (an absent .bashrc
// is kept from being created by binding an empty read-only directory onto
// it, and bubblewrap must create the directory to mount onto it).
//
// Every run registers its placeholders in a record before the sandbox
// starts and holds an exclusive lock on it while it runs. The kernel drops
// the lock when the process dies, however it dies, so a later Sweep knows
// the run is over. Placeholders are removed only when no registered run is
// alive, because a mount point unlinked on the host is detached from every
// sandbox that still relies on it; and only while they are still what
// bubblewrap made: an empty regular file or an empty directory.
//
// The registry's directory holds:
//
//	run-*.json     the runs' records, each locked by its run while it lives;
//	               one version of the record a line, the last in force
//	run-*.snap     what a run's write roots held before its command started
//	new-*.json     a record Begin is making, which sweeps pass over
//	scratch-*      the runs' scratch directories
//	registry.lock  taken by Begin to name a record, by a sweep to remove
//	               placeholders (write-only: no sandbox can open it)
//	check.lock     one check of a killed run at a time (write-only too)
package placeholders

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/runtime/private"
	"srt.dev/runtime/quarantine"
)

// Registry is a directory of manifests, private to the user.
type Registry struct {
	Dir string
	// TmpDir holds the runs' temporary directories (see Tmp); "" means
	// none. Like Dir, it is private to the user.
	TmpDir string
	// UncheckedDir holds the trees whose check could not vouch for
	// everything (see Unchecked), with their snapshots: it outlives a
	// reboot, unlike Dir (often in $XDG_RUNTIME_DIR); "" means Dir.
	UncheckedDir string
}

// Default returns the registry in srt's own directory:
// $XDG_RUNTIME_DIR/srt/placeholders, else the user's cache directory
// (~/.cache/srt/placeholders, beside srt's policy cache), else
// /tmp/srt-<uid>; never under $TMPDIR, which may well be the project. The
// runs' temporary directories are in the host's temporary directory under
// a per-user name, on the file system the command's temporary files would
// use without a sandbox (XDG_RUNTIME_DIR is often a small tmpfs).
func Default() (*Registry, error) {
	base := os.Getenv("XDG_RUNTIME_DIR")
	if base != "" {
		base = filepath.Join(base, "srt")
	} else if c, err := os.UserCacheDir(); err == nil {
		base = filepath.Join(c, "srt")
	} else {
		base = filepath.Join("/tmp", "srt-"+strconv.Itoa(os.Getuid()))
	}
	r := &Registry{Dir: filepath.Join(base, "placeholders"), TmpDir: private.TmpDir()}
	if state, err := stateDir(); err == nil {
		r.UncheckedDir = filepath.Join(state, "unchecked")
	}
	if err := r.ensure(); err != nil {
		return nil, err
	}
	return r, nil
}

// ensure creates the directory, refusing one that another user controls:
// someone else could plant records naming files to delete.
func (r *Registry) ensure() error { return private.Dir(r.Dir) }

// stateDir is srt's directory of state that outlives a reboot:
// $XDG_STATE_HOME/srt, or ~/.local/state/srt.
func stateDir() (string, error) {
	if s := os.Getenv("XDG_STATE_HOME"); s != "" {
		return filepath.Join(s, "srt"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state", "srt"), nil
}

// uncheckedDir is where the unchecked trees are recorded (UncheckedDir).
func (r *Registry) uncheckedDir() string {
	if r.UncheckedDir != "" {
		return r.UncheckedDir
	}
	return r.Dir
}

// Run is one registered sandbox run.
type Run struct {
	r     *Registry
	file  *os.File // locked while the run lives
	path  string   // the record's name (run-*.json)
	paths []string
	rec   record
}

// record is what a run's file holds.
type record struct {
	// Placeholders are removed only while still empty.
	Placeholders []string `json:"placeholders"`
	// Scratch are directories of the run inside the registry or its
	// TmpDir, removed whole as soon as the run has ended.
	Scratch []string `json:"scratch,omitempty"`
	// Check, with Quarantine (the store's directory), is the check of
	// protected names still due for the run (see package quarantine).
	Check      *quarantine.Spec `json:"check,omitempty"`
	Quarantine string           `json:"quarantine,omitempty"`
	// Cgroups are the cgroup directories made for the run's resource
	// limits (see RemoveCgroups), removed once it has ended.
	Cgroups []string `json:"cgroups,omitempty"`
}

// Tmp makes a new, empty directory (mode 0700) in TmpDir for a run's
// temporary files; pass it to Register so that it is removed with the
// run, however the run ends.
func (r *Registry) Tmp() (string, error) {
	if r.TmpDir == "" {
		return "", errors.New("the registry has no directory for temporary files")
	}
	if err := private.Dir(r.TmpDir); err != nil {
		return "", err
	}
	return os.MkdirTemp(r.TmpDir, "run-")
}

// ownsScratch reports whether s is a directory Scratch or Tmp made: only
// such a directory is ever removed whole.
func (r *Registry) ownsScratch(s string) bool {
	dir, base := filepath.Dir(s), filepath.Base(s)
	return dir == r.Dir && strings.HasPrefix(base, "scratch-") ||
		r.TmpDir != "" && dir == r.TmpDir && strings.HasPrefix(base, "run-")
}

// Scratch makes a private directory for a run (e.g. the empty source of
// placeholder directories); pass it to Register so that it is removed with
// the run, however the run ends.
func (r *Registry) Scratch() (string, error) {
	return os.MkdirTemp(r.Dir, "scratch-")
}

// Scratch makes a private directory for the run in the registry, as
// Registry.Scratch does, named in the run's record before it exists: it
// is removed with the run however the run ends, even when srt is killed
// right after making it.
func (run *Run) Scratch() (string, error) { return run.mkdir(run.r.Dir, "scratch-") }

// Tmp makes the run's temporary directory in TmpDir, as Registry.Tmp
// does, named in the run's record before it exists.
func (run *Run) Tmp() (string, error) {
	if run.r.TmpDir == "" {
		return "", errors.New("the registry has no directory for temporary files")
	}
	if err := private.Dir(run.r.TmpDir); err != nil {
		return "", err
	}
	return run.mkdir(run.r.TmpDir, "run-")
}

// mkdir makes a new directory (mode 0700) in dir, named prefix and 64
// random bits, once the record names it.
func (run *Run) mkdir(dir, prefix string) (string, error) {
	for range 100 {
		p := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 10))
		if exists(p) {
			continue
		}
		run.rec.Scratch = append(run.rec.Scratch, p)
		if err := run.write(); err != nil {
			run.rec.Scratch = run.rec.Scratch[:len(run.rec.Scratch)-1]
			return "", err
		}
		err := os.Mkdir(p, 0o700)
		if err == nil {
			return p, nil
		}
		// Not ours (made meanwhile) or not made: the record must not
		// name it.
		run.rec.Scratch = run.rec.Scratch[:len(run.rec.Scratch)-1]
		if werr := run.write(); werr != nil {
			return "", errors.Join(err, werr)
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no free name for a directory in %s", dir)
}

// Register records the placeholders and scratch directories of a run that
// is about to start and locks the record until Release.
func (r *Registry) Register(paths []string, scratch ...string) (*Run, error) {
	return r.RegisterChecked(paths, nil, "", scratch...)
}

// RegisterChecked is Register for a run whose protected names are checked
// when it ends (quarantine.Check, items moved to the store in dir),
// however it ends, once its snapshot is recorded (see Snapshot).
func (r *Registry) RegisterChecked(paths []string, check *quarantine.Spec, dir string, scratch ...string) (*Run, error) {
	run, err := r.Begin()
	if err != nil {
		return nil, err
	}
	if err := run.Set(paths, check, dir, scratch...); err != nil {
		run.file.Close()
		os.Remove(run.path)
		return nil, err
	}
	return run, nil
}

// Begin registers a run before it looks at the tree (its record locked,
// still empty; Set fills it in): from then on, no sweep removes a
// placeholder that the run may find and rely on.
//
// The record is made under a name sweeps pass over (new-*.json), locked
// and written there, and only then given its name (run-*.json), under
// the registry's lock: a sweep never finds a record that is not locked
// yet, which it would take for one whose run has ended; and one that is
// removing the placeholders of ended runs has either seen this run alive
// or finished before the run looks at the tree.
func (r *Registry) Begin() (*Run, error) {
	for range 3 {
		run, err := r.begin()
		if !errors.Is(err, errAbandoned) {
			return run, err
		}
		// A sweep took the record, not locked for a minute, for one
		// whose run was killed: make another.
	}
	return nil, errAbandoned
}

// errAbandoned is Begin's record removed by a sweep before it was locked.
var errAbandoned = errors.New("the new record was removed before it was locked")

func (r *Registry) begin() (*Run, error) {
	f, suffix, err := r.create()
	if err != nil {
		return nil, err
	}
	if testHooks.created != nil {
		testHooks.created()
	}
	fail := func(err error) (*Run, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		return fail(err)
	}
	run := &Run{r: r, file: f}
	if err := run.write(); err != nil {
		return fail(err)
	}
	unlock, err := r.lock(unix.LOCK_SH)
	if err != nil {
		return fail(err)
	}
	defer unlock()
	// link, not rename: it never replaces another run's record.
	run.path = filepath.Join(r.Dir, "run-"+suffix+".json")
	if err := os.Link(f.Name(), run.path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			err = errAbandoned
		}
		return fail(err)
	}
	os.Remove(f.Name())
	return run, nil
}

// create makes a new record file (new-SUFFIX.json), opened for appending.
func (r *Registry) create() (*os.File, string, error) {
	for range 100 {
		suffix := strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := os.OpenFile(filepath.Join(r.Dir, "new-"+suffix+".json"), os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			// Nor may the run's own name be taken already.
			if _, err := os.Lstat(filepath.Join(r.Dir, "run-"+suffix+".json")); err == nil {
				f.Close()
				os.Remove(f.Name())
				continue
			}
		}
		return f, suffix, err
	}
	return nil, "", fmt.Errorf("no free name for a record in %s", r.Dir)
}

// lock takes the registry's lock (registry.lock): shared by runs giving
// their records a name (Begin), exclusive for a sweep that removes the
// placeholders of ended runs. Its mode (write-only) keeps every sandbox
// from opening it (the registry is read-only there): no command can hold
// it to stall the runs or the sweeps of others. It waits at most
// lockWait.
func (r *Registry) lock(how int) (unlock func(), err error) {
	name := filepath.Join(r.Dir, "registry.lock")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE, 0o200)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm() != 0o200 {
		f.Chmod(0o200)
	}
	deadline := time.Now().Add(lockWait)
	for pause := time.Millisecond; ; pause = min(2*pause, 20*time.Millisecond) {
		err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		time.Sleep(pause)
	}
}

// abandoned is how long a sweep lets a new record (new-*.json) stay
// unlocked before it takes it for one whose run was killed.
const abandoned = time.Minute

// lockWait bounds how long a run or a sweep waits for the registry's lock
// (held for the time it takes to remove a few placeholders).
const lockWait = 30 * time.Second

// Set records the placeholders, the check and the scratch directories of
// a run that Begin registered, before its sandbox starts; the directories
// Run.Scratch and Run.Tmp made stay recorded.
func (run *Run) Set(paths []string, check *quarantine.Spec, dir string, scratch ...string) error {
	for _, s := range scratch {
		if !run.r.ownsScratch(s) {
			return fmt.Errorf("scratch directory %s is not in the registry", s)
		}
	}
	run.paths = paths
	all := append(slices.Clone(run.rec.Scratch), scratch...)
	slices.Sort(all)
	run.rec = record{Placeholders: paths, Scratch: slices.Compact(all), Check: check, Quarantine: dir}
	return run.write()
}

// write appends the record to the run's file. A record file holds one
// version of the record a line, the last complete one in force
// (readRecord): it is never truncated, so that srt killed in the middle
// of a write leaves the version before, never an empty record.
func (run *Run) write() error {
	return appendRecord(run.file, run.rec)
}

func appendRecord(f *os.File, rec record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// The line starts with a newline too: one cut short before it ends
	// stays a line of its own, which does not decode.
	_, err = f.Write(append(append([]byte{'\n'}, b...), '\n'))
	return err
}

// readRecord reads the record in force in f: the last line that decodes.
func readRecord(f *os.File) (record, bool) {
	b, err := io.ReadAll(io.NewSectionReader(f, 0, maxRecord))
	if err != nil {
		return record{}, false
	}
	lines := bytes.Split(b, []byte{'\n'})
	for i := len(lines) - 1; i >= 0; i-- {
		var rec record
		if len(lines[i]) > 0 && json.Unmarshal(lines[i], &rec) == nil {
			return rec, true
		}
	}
	return record{}, false
}

// Snapshot records what the write roots held before the command
// started (quarantine.Snap), in a file of the registry named in the
// record: from then on, however the run ends, its check is due. A run
// whose record names no snapshot never started its command.
func (run *Run) Snapshot(s *quarantine.Snapshot) error {
	if run.rec.Check == nil {
		return errors.New("the run has no check")
	}
	p := strings.TrimSuffix(run.path, ".json") + ".snap"
	if err := s.WriteFile(p); err != nil {
		return err
	}
	run.rec.Check.Snapshot = p
	return run.write()
}

// Checked records that the run's protected names were checked: a sweep
// need not check them again. The run's snapshot becomes the tree cache's
// entry keep (see TreeCache): what changed since is read again by the
// next run, the rest is not; "" removes it.
func (run *Run) Checked(keep string) error {
	if c := run.rec.Check; c != nil && c.Snapshot != "" {
		if keep == "" || private.Dir(filepath.Dir(keep)) != nil || os.Rename(c.Snapshot, keep) != nil {
			os.Remove(c.Snapshot)
		}
	}
	run.rec.Check, run.rec.Quarantine = nil, ""
	return run.write()
}

// TreeCache is where the runs keep what their last check saw of their
// write roots (a quarantine.Snapshot per set of roots), so that the next
// run's snapshot reads again only what changed since. Like the registry,
// it is private to the user and read-only in every sandbox.
func (r *Registry) TreeCache() string { return filepath.Join(filepath.Dir(r.Dir), "trees") }

// Record is the path of the run's record.
func (run *Run) Record() string { return run.path }

// WaitEnded waits until no process holds the lock of the record at path
// (its run has ended), for at most 5 seconds, asking every few
// milliseconds: a blocking flock could not be given up at the limit. A
// record already removed has ended.
func (r *Registry) WaitEnded(path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); !errors.Is(err, unix.EWOULDBLOCK) {
			return
		}
	}
}

// Release ends the run: its record is unlocked, and the placeholders of
// every ended run are removed if no other run is alive. pending reports
// that the registry holds a check only a sweep with checks does (a killed
// run's, or this one's if it was not checked).
func (run *Run) Release() (pending bool, err error) {
	err = run.file.Close() // drops the lock
	pending, serr := run.r.Sweep(false)
	return pending, errors.Join(err, serr)
}

// Sweep removes the scratch and temporary directories of ended runs
// (records whose lock nobody holds), and their placeholders unless some
// run is still alive; it is safe to call at any time, for example when srt
// starts. The check of protected names that a killed run still owes
// (quarantine.Check, which walks its write roots) is done only with
// checks; without, such a run is left whole for a sweep that does, and
// pending reports it (start a reaper: see Reap in runtime/sandbox).
//
// A record goes only once what it names is gone: a placeholder that
// cannot be removed yet stays in it for a later sweep.
func (r *Registry) Sweep(checks bool) (pending bool, err error) {
	dead, alive, pending, err := r.ended(checks)
	if err != nil {
		return false, err
	}
	// A run's scratch and temporary directories serve its sandbox alone:
	// they go as soon as it has ended.
	var errs []error
	checked := false
	for _, d := range dead {
		if d.rec.Check != nil {
			if err := r.checkDead(d.file); err != nil {
				// The check could not be done, nor the tree recorded as
				// unchecked: the run stays owed, its placeholders too.
				errs = append(errs, err)
				pending = true
			}
			checked = true
		}
		errs = append(errs, r.removeScratch(d.rec))
		d.file.Close()
	}
	if alive && !checked {
		// A placeholder unlinked on the host is detached from every
		// sandbox that relies on it: they wait until no run is alive
		// (the last run to end sees the others ended).
		return pending, errors.Join(errs...)
	}
	// Looked at again under the registry's lock, with the runs' checks
	// done: a run that ended meanwhile is seen ended, one that began is
	// seen alive.
	p, err := r.removeEnded()
	return pending || p, errors.Join(append(errs, err)...)
}

// An endedRun is the record of a run that has ended, open and locked
// (shared) by the sweep that reads it.
type endedRun struct {
	file *os.File
	rec  record
}

// ended opens the records of ended runs, but for those whose check is due
// when the sweep does no checks (pending); alive reports a record locked
// by its run.
func (r *Registry) ended(checks bool) (dead []endedRun, alive, pending bool, err error) {
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return nil, false, false, err
	}
	for _, e := range entries {
		if !isRecord(e.Name()) {
			continue
		}
		f, locked := openEnded(filepath.Join(r.Dir, e.Name()))
		alive = alive || locked
		if f == nil {
			continue
		}
		rec, _ := readRecord(f) // one that does not decode names nothing
		if rec.Check != nil && !checks {
			// Left whole for a sweep that checks; its sandbox is gone, so
			// it holds no one else's placeholders back.
			f.Close()
			pending = true
			continue
		}
		dead = append(dead, endedRun{f, rec})
	}
	return dead, alive, pending, nil
}

// isRecord reports whether name is a run's record (run-*.json).
func isRecord(name string) bool {
	return strings.HasPrefix(name, "run-") && strings.HasSuffix(name, ".json")
}

// openEnded opens the record at p, locked shared, if its run has ended;
// alive reports that its run holds it (f is nil then, and when the record
// is gone). A live run holds its record's lock exclusively; sweepers look
// with a shared one, so that a sweep in progress elsewhere never makes an
// ended run look alive.
func openEnded(p string) (f *os.File, alive bool) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, false
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, true // EWOULDBLOCK; any other error is taken for it
	}
	return f, false
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// removeScratch removes the scratch and temporary directories and the
// cgroups of an ended run.
func (r *Registry) removeScratch(rec record) error {
	var errs []error
	for _, s := range rec.Scratch {
		if r.removable(s) {
			errs = append(errs, private.RemoveAll(s))
		}
	}
	errs = append(errs, RemoveCgroups(rec.Cgroups))
	return errors.Join(errs...)
}

// removable reports whether s is a scratch directory a sweep removes:
// one Scratch or Tmp made, in a TmpDir reached through no symlink.
func (r *Registry) removable(s string) bool {
	return r.ownsScratch(s) && (filepath.Dir(s) == r.Dir || realDir(r.TmpDir))
}

// removeEnded removes the placeholders of every ended run, when no run is
// alive, under the registry's lock (exclusive): no run gives its record a
// name meanwhile (Begin), so none looks at the tree before this is done.
// The placeholders of all ended runs go together, deepest first: one
// run's may lie in another's (.claude, and .claude/commands made by a run
// that began while the first was alive). A record is removed once what it
// names is gone; otherwise it is written again with what remains.
func (r *Registry) removeEnded() (pending bool, err error) {
	unlock, err := r.lock(unix.LOCK_EX)
	if err != nil {
		return false, err
	}
	defer unlock()
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return false, err
	}
	type endedRecord struct {
		endedRun
		path string
	}
	var dead []endedRecord
	defer func() {
		for _, d := range dead {
			d.file.Close()
		}
	}()
	var paths, waiting []string
	for _, e := range entries {
		p := filepath.Join(r.Dir, e.Name())
		if strings.HasPrefix(e.Name(), "new-") && strings.HasSuffix(e.Name(), ".json") {
			// A record Begin has not named yet: left by a run killed
			// before it did, when nothing holds it and it is old enough
			// (Begin locks it right after making it).
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > abandoned {
				if f, _ := openEnded(p); f != nil {
					os.Remove(p)
					f.Close()
				}
			}
			continue
		}
		if !isRecord(e.Name()) {
			continue
		}
		f, alive := openEnded(p)
		if alive {
			return pending, nil
		}
		if f == nil {
			continue
		}
		rec, _ := readRecord(f)
		if rec.Check != nil {
			// Its check is due: a sweep with checks removes its
			// placeholders after it.
			pending = true
			waiting = append(waiting, rec.Placeholders...)
			f.Close()
			continue
		}
		dead = append(dead, endedRecord{endedRun{f, rec}, p})
		paths = append(paths, rec.Placeholders...)
	}
	if testHooks.listed != nil {
		testHooks.listed()
	}
	keep, rerr := removeAll(paths, waiting)
	errs := []error{rerr}
	for _, d := range dead {
		var left record
		for _, p := range d.rec.Placeholders {
			if keep[p] {
				left.Placeholders = append(left.Placeholders, p)
			}
		}
		// What a sweep that saw the run ended could not remove, or one
		// that saw it alive did not (its own sweep does, and then this).
		for _, s := range d.rec.Scratch {
			if r.removable(s) && exists(s) {
				left.Scratch = append(left.Scratch, s)
			}
		}
		for _, c := range d.rec.Cgroups {
			if exists(c) && CgroupName(c) {
				left.Cgroups = append(left.Cgroups, c)
			}
		}
		if left.Placeholders == nil && left.Scratch == nil && left.Cgroups == nil {
			if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			continue
		}
		errs = append(errs, appendRecord(d.file, left))
	}
	return pending, errors.Join(errs...)
}

// checkDead does the check an ended run owes, once: checks are one at a
// time in a registry (check.lock), and the record, read again under that
// lock, is marked checked when done, so that another sweep that found it
// too does not check it again.
func (r *Registry) checkDead(f *os.File) error {
	unlock, err := r.checkLock()
	if err != nil {
		return err
	}
	defer unlock()
	rec, ok := readRecord(f)
	if !ok || rec.Check == nil {
		return nil // checked meanwhile, or nothing to trust
	}
	err = r.check(f.Name(), rec.Check, rec.Quarantine)
	if err != nil {
		// The check could not be done: the tree stays unchecked, or, if
		// even that cannot be recorded, the run stays owed for a later
		// sweep.
		if uerr := r.leaveUnchecked(f.Name(), *rec.Check, rec.Quarantine, []string{"the check could not be done: " + err.Error()}); uerr != nil {
			return errors.Join(err, uerr)
		}
	}
	rec.Check, rec.Quarantine = nil, ""
	return appendRecord(f, rec)
}

// checkLock takes check.lock (exclusive): checks are one at a time in a
// registry. Write-only, as registry.lock: no sandbox can hold it.
func (r *Registry) checkLock() (unlock func(), err error) {
	lock, err := os.OpenFile(filepath.Join(r.Dir, "check.lock"), os.O_WRONLY|os.O_CREATE, 0o200)
	if err != nil {
		return nil, err
	}
	if fi, err := lock.Stat(); err == nil && fi.Mode().Perm() != 0o200 {
		lock.Chmod(0o200)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		return nil, err
	}
	return func() { lock.Close() }, nil
}

// maxRecord bounds what is read of a record.
const maxRecord = 64 << 20

// check does the check a killed run owes (its record is the file
// record): its write roots compared with the snapshot taken before its
// command started, what it finds moved to the quarantine in dir. A run
// without a snapshot never started its command. A check that cannot vouch
// for everything leaves the tree unchecked (see Unchecked).
func (r *Registry) check(record string, c *quarantine.Spec, dir string) error {
	snap := c.Snapshot
	if snap == "" {
		return nil
	}
	if !r.ownsSnapshot(snap) {
		return fmt.Errorf("record names %q as its snapshot, which is not one of the registry's", snap)
	}
	start, err := quarantine.ReadSnapshot(snap)
	if err != nil {
		return err
	}
	store, err := quarantine.Open(dir)
	if err != nil {
		return err
	}
	out := quarantine.CheckAndMove(*c, start, store, quarantine.DefaultLimits, time.Now().Add(MoveTime))
	if !out.Complete() {
		return r.leaveUnchecked(record, *c, dir, out.Unchecked)
	}
	return os.Remove(snap)
}

// MoveTime is how long a check after a run moves what it found before it
// leaves the rest to srt quarantine check.
const MoveTime = 10 * time.Second

// ownsSnapshot reports whether snap is a snapshot file the registry made.
func (r *Registry) ownsSnapshot(snap string) bool {
	base := filepath.Base(snap)
	dir := filepath.Dir(snap)
	return strings.HasSuffix(base, ".snap") && (dir == r.Dir && strings.HasPrefix(base, "run-") || dir == r.uncheckedDir() && strings.HasPrefix(base, uncheckedPrefix))
}

// An Unchecked is a tree a run's check could not vouch for: until srt
// quarantine check has checked it (Recheck), no run starts there.
type Unchecked struct {
	// File is its record in the registry.
	File string `json:"-"`
	// Check is the run's check, its snapshot (the tree before the command
	// started) kept beside the record.
	Check quarantine.Spec `json:"check"`
	// Quarantine is the store's directory.
	Quarantine string `json:"quarantine"`
	// Time is when the check was left unfinished.
	Time time.Time `json:"time"`
	// Why says what the check could not vouch for.
	Why []string `json:"why"`
}

const uncheckedPrefix = "unchecked-"

// Unchecked records that the run's check could not vouch for everything
// (why): its snapshot is kept, with a record of its own that outlives the
// run, and srt refuses to start a run in the tree until it is checked.
func (run *Run) Unchecked(why []string) error {
	c := run.rec.Check
	if c == nil {
		return errors.New("the run has no check")
	}
	if err := run.r.leaveUnchecked(run.path, *c, run.rec.Quarantine, why); err != nil {
		return err
	}
	run.rec.Check, run.rec.Quarantine = nil, ""
	return run.write()
}

// leaveUnchecked writes the record of an unchecked tree for the run whose
// record is the file record, its snapshot moved beside it.
func (r *Registry) leaveUnchecked(record string, c quarantine.Spec, dir string, why []string) error {
	base := uncheckedPrefix + strings.TrimSuffix(strings.TrimPrefix(filepath.Base(record), "run-"), ".json")
	if c.Snapshot != "" && !strings.HasPrefix(filepath.Base(c.Snapshot), uncheckedPrefix) {
		if err := private.Dir(r.uncheckedDir()); err != nil {
			return err
		}
		snap := filepath.Join(r.uncheckedDir(), base+".snap")
		if err := os.Rename(c.Snapshot, snap); err != nil {
			return err
		}
		c.Snapshot = snap
	}
	u := Unchecked{Check: c, Quarantine: dir, Time: time.Now().UTC(), Why: why}
	b, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return err
	}
	return private.WriteFile(r.uncheckedDir(), base+".json", append(b, '\n'))
}

// UncheckedTrees are the trees left unchecked, oldest first.
func (r *Registry) UncheckedTrees() ([]Unchecked, error) {
	dir := r.uncheckedDir()
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Unchecked
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), uncheckedPrefix) || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		var u Unchecked
		err = json.NewDecoder(io.LimitReader(f, maxRecord)).Decode(&u)
		f.Close()
		if err != nil {
			// A damaged record still stands for a tree nobody checked:
			// what it names is unknown, so it names everything.
			u = Unchecked{Check: quarantine.Spec{Roots: []string{"/"}}, Why: []string{fmt.Sprintf("its record %s cannot be read (%v)", p, err)}}
		}
		u.File = p
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	return out, nil
}

// Overlaps reports whether the tree holds, or lies in, one of paths.
func (u Unchecked) Overlaps(paths ...string) bool {
	for _, root := range u.Check.Roots {
		for _, p := range paths {
			if within(p, root) || within(root, p) {
				return true
			}
		}
	}
	return false
}

func within(p, base string) bool {
	p, base = filepath.Clean(p), filepath.Clean(base)
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}

// Recheck checks an unchecked tree again, within lim, moving what it finds
// to its quarantine; when the check vouches for everything, the tree's
// record and snapshot are removed. Checks are one at a time in a registry.
func (r *Registry) Recheck(u Unchecked, lim quarantine.Limits) (quarantine.Outcome, error) {
	unlock, err := r.checkLock()
	if err != nil {
		return quarantine.Outcome{}, err
	}
	defer unlock()
	if u.Check.Snapshot == "" || !r.ownsSnapshot(u.Check.Snapshot) {
		return quarantine.Outcome{Unchecked: u.Why}, fmt.Errorf("%s names no snapshot of the registry's: the tree cannot be compared with what it held; check it by hand, then remove %s", u.File, u.File)
	}
	start, err := quarantine.ReadSnapshot(u.Check.Snapshot)
	if err != nil {
		return quarantine.Outcome{Unchecked: u.Why}, err
	}
	store, err := quarantine.Open(u.Quarantine)
	if err != nil {
		return quarantine.Outcome{Unchecked: u.Why}, err
	}
	out := quarantine.CheckAndMove(u.Check, start, store, lim, time.Time{})
	if !out.Complete() {
		return out, nil
	}
	return out, errors.Join(os.Remove(u.File), os.Remove(u.Check.Snapshot))
}

// realDir reports whether dir is a directory reached through no symlink,
// so that removing what is inside it removes nothing elsewhere.
func realDir(dir string) bool {
	real, err := filepath.EvalSymlinks(dir)
	return err == nil && real == filepath.Clean(dir)
}

// removeAll removes placeholders that are still as bubblewrap made them
// (an empty regular file or an empty directory), deepest first. keep are
// those to try again later: one whose removal failed (a mount point still
// held somewhere: EBUSY), and a directory that still holds one of them or
// a placeholder of waiting (runs whose check is due). Anything else that
// is not empty or not a placeholder's type was made by someone else
// since: it is left, and forgotten.
func removeAll(paths, waiting []string) (keep map[string]bool, err error) {
	sorted := slices.Clone(paths)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	sorted = slices.Compact(sorted)
	keep = map[string]bool{}
	holds := func(dir string) bool {
		for _, p := range waiting {
			if strings.HasPrefix(p, dir+"/") {
				return true
			}
		}
		for p := range keep {
			if strings.HasPrefix(p, dir+"/") {
				return true
			}
		}
		return false
	}
	var errs []error
	for _, p := range sorted {
		fi, err := os.Lstat(p)
		if err != nil {
			continue // gone already
		}
		switch {
		case fi.Mode().IsRegular() && fi.Size() == 0:
			err = os.Remove(p)
		case fi.IsDir():
			err = os.Remove(p)
			if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
				keep[p] = holds(p)
				continue
			}
		default:
			continue
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			keep[p] = true
			errs = append(errs, err)
		}
	}
	return keep, errors.Join(errs...)
}

// testHooks stop a run or a sweep where they race, for tests.
var testHooks struct {
	// created is called by Begin once it has created the run's record,
	// before it locks it.
	created func()
	// listed is called by a sweep that found no run alive, before it
	// removes their placeholders.
	listed func()
}
