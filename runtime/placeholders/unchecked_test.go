//go:build linux

package placeholders

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/quarantine"
)

// TestUncheckedTree: a run whose check could not vouch for its tree
// leaves a record of it that outlives the run, with the snapshot; a later
// run overlapping the tree sees it; Recheck checks it again, moves what
// it finds and, once it vouches for everything, removes the record.
func TestUncheckedTree(t *testing.T) {
	r := registry(t)
	root := t.TempDir()
	store := filepath.Join(t.TempDir(), "q")
	check := &quarantine.Spec{Roots: []string{root}, GitConfig: true}
	run, err := r.RegisterChecked(nil, check, store)
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := quarantine.Snap(*check, nil, quarantine.DefaultLimits)
	if err := run.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	hook := filepath.Join(root, "r/.git/hooks/pre-commit")
	testenv.MkdirAll(t, filepath.Dir(hook), 0o755)
	testenv.WriteFile(t, filepath.Join(root, "r/.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	testenv.WriteFile(t, hook, []byte("evil"), 0o755)
	if err := run.Unchecked([]string{"the walk stopped at its limit"}); err != nil {
		t.Fatal(err)
	}
	if pending, err := run.Release(); pending || err != nil {
		t.Fatalf("Release = %v, %v: an unchecked tree is not a check owed by a killed run", pending, err)
	}
	trees, err := r.UncheckedTrees()
	if err != nil || len(trees) != 1 {
		t.Fatalf("UncheckedTrees = %v, %v", trees, err)
	}
	u := trees[0]
	if !strings.Contains(strings.Join(u.Why, ""), "limit") || !u.Overlaps(filepath.Join(root, "r")) || !u.Overlaps(filepath.Dir(root)) || u.Overlaps(t.TempDir()) {
		t.Errorf("unchecked tree %+v: why or overlaps wrong", u)
	}
	out, err := r.Recheck(u, quarantine.NoLimits)
	if err != nil || !out.Complete() || len(out.Items) != 1 {
		t.Fatalf("Recheck = %+v, %v", out, err)
	}
	if _, err := os.Lstat(hook); err == nil {
		t.Error("the hook is still there")
	}
	if trees, _ := r.UncheckedTrees(); len(trees) != 0 {
		t.Errorf("after a complete check, still unchecked: %v", trees)
	}
	if _, err := os.Stat(u.Check.Snapshot); err == nil {
		t.Error("the snapshot of the checked tree is left")
	}
}

// TestUncheckedKilledRun: a killed run whose check a sweep does cannot
// vouch for (its snapshot is damaged) leaves its tree unchecked rather
// than forgotten.
func TestUncheckedKilledRun(t *testing.T) {
	r := registry(t)
	root := t.TempDir()
	check := &quarantine.Spec{Roots: []string{root}, GitConfig: true}
	run, err := r.RegisterChecked(nil, check, filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := quarantine.Snap(*check, nil, quarantine.DefaultLimits)
	if err := run.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, run.rec.Check.Snapshot, []byte("damaged"), 0o600)
	run.file.Close() // killed: the lock drops, the check is owed
	if _, err := r.Sweep(true); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	trees, err := r.UncheckedTrees()
	if err != nil || len(trees) != 1 || !trees[0].Overlaps(root) {
		t.Fatalf("UncheckedTrees = %v, %v; want the killed run's", trees, err)
	}
}
