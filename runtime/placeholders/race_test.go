//go:build linux

package placeholders

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/quarantine"
)

// records lists the runs' records left in the registry.
func records(t *testing.T, r *Registry) []string {
	t.Helper()
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSweepBetweenCreateAndLock: a sweep that runs after a run has
// created its record and before it has locked it does not take the
// record for one cut short by a crash: the run's record stays where
// sweeps find it, and its placeholders go when it ends.
func TestSweepBetweenCreateAndLock(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	swept := false
	testHooks.created = func() {
		swept = true
		if _, err := r.Sweep(false); err != nil {
			t.Error(err)
		}
	}
	run, err := r.Begin()
	testHooks.created = nil
	if err != nil {
		t.Fatal(err)
	}
	if !swept {
		t.Fatal("Begin did not reach the point between creating and locking its record")
	}
	if !exists(run.Record()) {
		t.Fatalf("the run's record %s is gone: a sweep removed it before the run locked it", run.Record())
	}
	if err := run.Set(paths, nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Release(); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if exists(p) {
			t.Errorf("%s left behind: the run's record was lost", p)
		}
	}
	if left := records(t, r); len(left) > 0 {
		t.Errorf("records left: %v", left)
	}
}

// TestSweepHoldsOffBegin: a run that begins while a sweep is removing the
// placeholders of ended runs (the sweep found no run alive) looks at the
// tree only once the sweep is done: it never finds a placeholder that the
// sweep then pulls from under it.
func TestSweepHoldsOffBegin(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	ended, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	ended.file.Close() // ended, not swept yet
	var second *Run
	var found bool
	begun := make(chan error, 1)
	testHooks.listed = func() {
		testHooks.listed = nil
		go func() {
			var err error
			second, err = r.Begin()
			found = exists(paths[0]) // what the run would bind
			begun <- err
		}()
		// The run begins now, or (with the sweep holding it off) once
		// the sweep is done.
		select {
		case err := <-begun:
			begun <- err
		case <-time.After(300 * time.Millisecond):
		}
	}
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	testHooks.listed = nil
	if err := <-begun; err != nil {
		t.Fatal(err)
	}
	if found && !exists(paths[0]) {
		t.Fatal("a run that began during a sweep found a placeholder, and the sweep removed it")
	}
	if _, err := second.Release(); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if exists(p) {
			t.Errorf("%s left behind after the last run ended", p)
		}
	}
}

// TestNestedPlaceholdersOfTwoRuns: a placeholder directory of one ended run
// that holds placeholders of another (.claude, and .claude/commands made
// by a run that began while the first was alive) goes too, whichever
// record the sweep reads first.
func TestNestedPlaceholdersOfTwoRuns(t *testing.T) {
	for _, parentFirst := range []bool{true, false} {
		name := "child first"
		if parentFirst {
			name = "parent first"
		}
		t.Run(name, func(t *testing.T) {
			r := registry(t)
			tree := t.TempDir()
			parent := filepath.Join(tree, ".claude")
			children := []string{filepath.Join(parent, "commands"), filepath.Join(parent, "agents")}
			for _, d := range append([]string{parent}, children...) {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			a, err := r.Register([]string{parent})
			if err != nil {
				t.Fatal(err)
			}
			b, err := r.Register(children)
			if err != nil {
				t.Fatal(err)
			}
			// Both ended without sweeping; the sweep reads records in
			// the order of their names.
			a.file.Close()
			b.file.Close()
			first, second := "run-0.json", "run-1.json"
			if !parentFirst {
				first, second = second, first
			}
			testenv.Rename(t, a.Record(), filepath.Join(r.Dir, first))
			testenv.Rename(t, b.Record(), filepath.Join(r.Dir, second))
			if _, err := r.Sweep(false); err != nil {
				t.Fatal(err)
			}
			for _, p := range append(children, parent) {
				if exists(p) {
					t.Errorf("%s left behind", p)
				}
			}
			if left := records(t, r); len(left) > 0 {
				t.Errorf("records left: %v", left)
			}
		})
	}
}

// TestPendingCheckKeepsParent: a placeholder directory that holds the
// placeholder of a killed run whose check is still due is not taken for
// the user's: it is removed once the check is done and the child is gone.
func TestPendingCheckKeepsParent(t *testing.T) {
	r := registry(t)
	tree := t.TempDir()
	parent := filepath.Join(tree, ".claude")
	child := filepath.Join(parent, "commands")
	testenv.Mkdir(t, parent, 0o755)
	testenv.Mkdir(t, child, 0o755)
	done, err := r.Register([]string{parent})
	if err != nil {
		t.Fatal(err)
	}
	check := &quarantine.Spec{Roots: []string{tree}}
	killed, err := r.RegisterChecked([]string{child}, check, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := quarantine.Snap(*check, nil, quarantine.DefaultLimits)
	if err := killed.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	killed.file.Close() // killed: its check is due
	if pending, err := done.Release(); err != nil || !pending {
		t.Fatalf("Release = %v, %v; want the killed run's check pending", pending, err)
	}
	if !exists(child) {
		t.Fatal("a sweep without checks removed the placeholder of a run whose check is due")
	}
	if pending, err := r.Sweep(true); err != nil || pending {
		t.Fatalf("Sweep(true) = %v, %v", pending, err)
	}
	for _, p := range []string{child, parent} {
		if exists(p) {
			t.Errorf("%s left behind after the check was done", p)
		}
	}
	if left := records(t, r); len(left) > 0 {
		t.Errorf("records left: %v", left)
	}
}

// TestFailedRemovalKept: a placeholder that cannot be removed yet (here a
// mount point: EBUSY) stays in its run's record, and a later sweep removes
// it. (As root: it mounts a tmpfs.)
func TestFailedRemovalKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs on a placeholder: needs root")
	}
	r := registry(t)
	_, paths := makePlaceholders(t)
	if err := unix.Mount("tmpfs", paths[1], "tmpfs", 0, "size=4k"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	mounted := true
	defer func() {
		if mounted {
			unix.Unmount(paths[1], unix.MNT_DETACH)
		}
	}()
	run, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Release(); err == nil {
		t.Error("Release reported no error while a placeholder could not be removed")
	}
	if !exists(paths[1]) || exists(paths[0]) {
		t.Fatalf("after the first sweep: %s exists %v (a mount point), %s exists %v", paths[1], exists(paths[1]), paths[0], exists(paths[0]))
	}
	if left := records(t, r); len(left) != 1 {
		t.Fatalf("records left: %v, want the run's, naming what is still to remove", left)
	}
	unix.Unmount(paths[1], 0)
	mounted = false
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	if exists(paths[1]) {
		t.Errorf("%s left behind after it could be removed", paths[1])
	}
	if left := records(t, r); len(left) > 0 {
		t.Errorf("records left: %v", left)
	}
}

// TestRecordCutShort: a record whose last write was cut short (srt killed
// in the middle of it) is read as its last complete version: what it names
// is still removed.
func TestRecordCutShort(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	run, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.file.WriteString(`{"placeholders": ["/x`); err != nil { // killed here
		t.Fatal(err)
	}
	run.file.Close()
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if exists(p) {
			t.Errorf("%s left behind", p)
		}
	}
	if left := records(t, r); len(left) > 0 {
		t.Errorf("records left: %v", left)
	}
}

// TestScratchOfKilledRun: the scratch and temporary directories a run
// makes are named in its record before they exist: a run killed right
// after making them (before Set) leaves nothing.
func TestScratchOfKilledRun(t *testing.T) {
	r := registry(t)
	r.TmpDir = filepath.Join(filepath.Dir(r.Dir), "tmp")
	run, err := r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := run.Scratch()
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := run.Tmp()
	if err != nil {
		t.Fatal(err)
	}
	if !exists(scratch) || !exists(tmp) {
		t.Fatalf("Scratch, Tmp made %s (%v), %s (%v)", scratch, exists(scratch), tmp, exists(tmp))
	}
	testenv.WriteFile(t, filepath.Join(tmp, "f"), []byte("x"), 0o600)
	run.file.Close() // killed
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{scratch, tmp} {
		if exists(d) {
			t.Errorf("%s left behind by a killed run", d)
		}
	}
	if left := records(t, r); len(left) > 0 {
		t.Errorf("records left: %v", left)
	}
}

// TestSetKeepsScratch: Set adds to the directories the run made, never
// drops one.
func TestSetKeepsScratch(t *testing.T) {
	r := registry(t)
	run, err := r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	made, err := run.Scratch()
	if err != nil {
		t.Fatal(err)
	}
	other, err := r.Scratch()
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Set(nil, nil, "", other); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(made) || exists(other) {
		t.Errorf("left behind: %s %v, %s %v", made, exists(made), other, exists(other))
	}
}
