//go:build linux

package quarantine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// plantHooks makes a repository in root with n hooks planted after the
// snapshot, and returns what the check finds.
func plantHooks(t testing.TB, root string, n int) []Finding {
	t.Helper()
	spec := Spec{Roots: []string{root}, GitConfig: true}
	write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(root, ".git/hooks/users-own"), "user's")
	start, _ := Snap(spec, nil, DefaultLimits)
	for i := range n {
		write(t, filepath.Join(root, fmt.Sprintf(".git/hooks/h%05d", i)), "x")
	}
	return Check(spec, start, DefaultLimits).Found
}

// TestManyHooksMovedWhole: a hooks directory in which the run planted
// more than maxDirFindings hooks is one finding, the directory itself;
// with fewer, each hook is one.
func TestManyHooksMovedWhole(t *testing.T) {
	root := t.TempDir()
	found := plantHooks(t, root, maxDirFindings+1)
	if len(found) != 1 || found[0].Path() != filepath.Join(root, ".git/hooks") {
		t.Fatalf("Check = %v, want the hooks directory whole", found)
	}
	store, err := Open(filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	items, left, err := store.Move(found, time.Time{})
	if err != nil || len(items) != 1 || len(left) != 0 {
		t.Fatalf("Move = %v, %v, %v", items, left, err)
	}
	if _, err := os.Lstat(filepath.Join(root, ".git/hooks")); err == nil {
		t.Error("the hooks directory is still there")
	}
	few := plantHooks(t, t.TempDir(), maxDirFindings)
	if len(few) != maxDirFindings {
		t.Errorf("%d hooks gave %d findings, want one each", maxDirFindings, len(few))
	}
}

// TestMoveDeadline: Move stops at its deadline and says what it did not
// come to.
func TestMoveDeadline(t *testing.T) {
	root := t.TempDir()
	found := plantHooks(t, root, 3)
	store, err := Open(filepath.Join(t.TempDir(), "q"))
	if err != nil {
		t.Fatal(err)
	}
	items, left, err := store.Move(found, time.Now().Add(-time.Second))
	if err != nil || len(items) != 0 || len(left) != 3 {
		t.Fatalf("Move past its deadline = %d items, %d left, %v; want 0, 3", len(items), len(left), err)
	}
}

// BenchmarkMove: what moving planted names costs, per name, one in each
// of many directories (go test ./runtime/quarantine -run '^$' -bench
// Move).
func BenchmarkMove(b *testing.B) {
	const n = 2000
	for b.Loop() {
		b.StopTimer()
		root := b.TempDir()
		spec := Spec{Roots: []string{root}, GitConfig: true}
		start, _ := Snap(spec, nil, DefaultLimits)
		for i := range n {
			write(b, filepath.Join(root, fmt.Sprintf("d%05d/.bashrc", i)), "x")
		}
		found := Check(spec, start, DefaultLimits).Found
		store, err := Open(filepath.Join(b.TempDir(), "q"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		items, left, err := store.Move(found, time.Time{})
		if err != nil || len(left) > 0 || len(items) != n {
			b.Fatalf("moved %d, left %d: %v", len(items), len(left), err)
		}
		b.ReportMetric(float64(time.Since(t0).Microseconds())/float64(len(items)), "µs/item")
	}
}
