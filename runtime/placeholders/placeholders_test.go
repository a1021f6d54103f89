//go:build linux

package placeholders

import (
	"golang.org/x/sys/unix"
	"os"
	"os/exec"
	"path/filepath"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/quarantine"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary register placeholders in a child process
// and then wait to be killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("SRT_PLACEHOLDER_CHILD"); dir != "" {
		r := &Registry{Dir: dir}
		var check *quarantine.Spec
		root, store, checked := strings.Cut(os.Getenv("SRT_PLACEHOLDER_CHECK"), ",")
		if checked {
			check = &quarantine.Spec{Roots: []string{root}, GitConfig: true, GitWatch: []string{filepath.Join(root, "cfg/git/config")}}
		}
		run, err := r.RegisterChecked(strings.Split(os.Getenv("SRT_PLACEHOLDER_PATHS"), ","), check, store)
		if err != nil {
			os.Exit(3)
		}
		if checked {
			// What a run does before its command starts, then what the
			// command writes.
			snap, _ := quarantine.Snap(*check, nil, quarantine.DefaultLimits)
			if err := run.Snapshot(snap); err != nil {
				os.Exit(4)
			}
			for _, err := range []error{
				os.MkdirAll(filepath.Join(root, ".git/hooks"), 0o755),
				os.WriteFile(filepath.Join(root, ".git/hooks/pre-commit"), []byte("#!/bin/sh\n"), 0o755),
				os.MkdirAll(filepath.Join(root, "cfg/git"), 0o755),
				os.WriteFile(filepath.Join(root, "cfg/git/config"), []byte("[core]\n\tpager = x\n"), 0o644),
			} {
				if err != nil {
					os.Exit(5)
				}
			}
		}
		os.Stdout.WriteString("registered\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func registry(t *testing.T) *Registry {
	parent := t.TempDir()
	testenv.Chmod(t, parent, 0o700)
	r := &Registry{Dir: filepath.Join(parent, "reg")}
	if err := r.ensure(); err != nil {
		t.Fatal(err)
	}
	return r
}

// makePlaceholders creates what bubblewrap would: empty files and dirs.
func makePlaceholders(t *testing.T) (tree string, paths []string) {
	tree = t.TempDir()
	paths = []string{filepath.Join(tree, ".bashrc"), filepath.Join(tree, ".claude")}
	if err := os.WriteFile(paths[0], nil, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(paths[1], 0o755); err != nil {
		t.Fatal(err)
	}
	return tree, paths
}

func TestReleaseRemoves(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	run, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Release(); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if exists(p) {
			t.Errorf("%s left behind", p)
		}
	}
}

// TestReleasePending: a run released before its check is done leaves the
// check to a sweep with checks, and says so; checked, it leaves nothing
// (its reaper then ends without sweeping).
func TestReleasePending(t *testing.T) {
	r := registry(t)
	root := t.TempDir()
	check := &quarantine.Spec{Roots: []string{root}}
	unchecked, err := r.RegisterChecked(nil, check, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := quarantine.Snap(*check, nil, quarantine.DefaultLimits)
	if err := unchecked.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	if pending, err := unchecked.Release(); err != nil || !pending {
		t.Fatalf("released unchecked: pending %v, %v; want pending", pending, err)
	}
	if pending, err := r.Sweep(true); err != nil || pending {
		t.Fatalf("sweep with checks: pending %v, %v", pending, err)
	}
	checked, err := r.RegisterChecked(nil, check, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := checked.Snapshot(snap); err != nil {
		t.Fatal(err)
	}
	if err := checked.Checked(""); err != nil {
		t.Fatal(err)
	}
	if pending, err := checked.Release(); err != nil || pending {
		t.Fatalf("released checked: pending %v, %v; want neither", pending, err)
	}
}

// TestSweepAfterKill: a run killed with SIGKILL leaves its placeholders;
// the next Sweep removes them.
func TestSweepAfterKill(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SRT_PLACEHOLDER_CHILD="+r.Dir, "SRT_PLACEHOLDER_PATHS="+strings.Join(paths, ","))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	if _, err := out.Read(buf); err != nil || string(buf) != "registered\n" {
		t.Fatalf("child: %q, %v", buf, err)
	}
	// Alive: a sweep removes nothing.
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	if !exists(paths[0]) {
		t.Fatal("a sweep removed the placeholders of a live run")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if exists(p) {
			t.Errorf("%s left behind after the owner was killed", p)
		}
	}
	if left := records(t, r); len(left) != 0 {
		t.Errorf("records left: %v", left)
	}
}

// TestSweepChecksKilledRun: a run killed after its command wrote a hook
// and git's configuration outside the repository owes its check; a sweep
// without checks leaves it whole and says so, one with checks moves both
// to the quarantine.
func TestSweepChecksKilledRun(t *testing.T) {
	r := registry(t)
	root := t.TempDir()
	store := filepath.Join(t.TempDir(), "q")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "SRT_PLACEHOLDER_CHILD="+r.Dir, "SRT_PLACEHOLDER_PATHS=", "SRT_PLACEHOLDER_CHECK="+root+","+store)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 11)
	if _, err := out.Read(buf); err != nil || string(buf) != "registered\n" {
		t.Fatalf("child: %q, %v", buf, err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	hook := filepath.Join(root, ".git/hooks/pre-commit")
	config := filepath.Join(root, "cfg/git/config") // git's, outside the repository
	if pending, err := r.Sweep(false); !pending || err != nil {
		t.Fatalf("Sweep(false) = %v, %v; want the check pending", pending, err)
	}
	if !exists(hook) {
		t.Fatal("a sweep without checks moved the hook")
	}
	if pending, err := r.Sweep(true); pending || err != nil {
		t.Fatalf("Sweep(true) = %v, %v", pending, err)
	}
	if exists(hook) || exists(config) {
		t.Fatal("the hook or the git configuration the killed run wrote is still there")
	}
	s, err := quarantine.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	if items, _ := s.List(); len(items) != 2 || items[0].Path != hook && items[1].Path != hook || items[0].Path != config && items[1].Path != config {
		t.Fatalf("quarantine holds %v; want the hook and the git configuration", items)
	}
	if entries, _ := os.ReadDir(r.Dir); len(entries) != 2 || entries[0].Name() != "check.lock" || entries[1].Name() != "registry.lock" {
		t.Errorf("registry left: %v (want only check.lock and registry.lock)", entries)
	}
}

// TestSweepsTogether: a sweep in progress (holding an ended run's record)
// does not make that run look alive to another sweep: the placeholders go.
func TestSweepsTogether(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	run, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	run.file.Close() // ended, not swept
	f, err := os.Open(run.Record())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH); err != nil { // another sweep, looking at it
		t.Fatal(err)
	}
	if _, err := r.Sweep(false); err != nil {
		t.Fatal(err)
	}
	if exists(paths[0]) {
		t.Fatal("an ended run's placeholder was kept because another sweep was looking at its record")
	}
}

// TestOtherRunAlive: one run ending does not pull a mount point from under
// another run that is still alive.
func TestOtherRunAlive(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	first, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Register(nil) // uses the same tree, created nothing
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if !exists(paths[0]) {
		t.Fatal("removed while another run is alive")
	}
	if _, err := second.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(paths[0]) || exists(paths[1]) {
		t.Error("left behind after the last run ended")
	}
}

// TestLeavesWhatChanged: a placeholder that now holds something is not ours
// to remove.
func TestLeavesWhatChanged(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	run, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	testenv.Chmod(t, paths[0], 0o644)
	testenv.WriteFile(t, paths[0], []byte("user data"), 0o644)
	testenv.WriteFile(t, filepath.Join(paths[1], "x"), nil, 0o644)
	if _, err := run.Release(); err != nil {
		t.Fatal(err)
	}
	if !exists(paths[0]) || !exists(paths[1]) {
		t.Error("removed a file or directory that changed since")
	}
}

func TestRegistryMustBePrivate(t *testing.T) {
	dir := t.TempDir()
	testenv.Chmod(t, dir, 0o777)
	r := &Registry{Dir: filepath.Join(dir, "reg")}
	if err := r.ensure(); err == nil {
		t.Error("accepted a registry under a world-writable directory")
	}
}

// TestTmpGoesWithItsRun: a run's temporary directory is removed as soon as
// the run ends, even while another run is alive, and never one outside
// TmpDir or reached through a symlink.
func TestTmpGoesWithItsRun(t *testing.T) {
	r := registry(t)
	r.TmpDir = filepath.Join(filepath.Dir(r.Dir), "tmp")
	tmp, err := r.Tmp()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(tmp, "f"), []byte("x"), 0o600)
	first, err := r.Register(nil, tmp)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Register(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(tmp) {
		t.Error("a run's temporary directory outlived it (another run was alive)")
	}
	second.Release()
	if _, err := r.Register(nil, filepath.Join(t.TempDir(), "run-x")); err == nil {
		t.Error("registered a temporary directory outside TmpDir")
	}
}

// TestBeginHoldsPlaceholders: a run that has begun (registered before it
// looks at the tree, its record still empty) keeps an ended run's
// placeholders in place: it may have found them and bound them.
func TestBeginHoldsPlaceholders(t *testing.T) {
	r := registry(t)
	_, paths := makePlaceholders(t)
	first, err := r.Register(paths)
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Release(); err != nil {
		t.Fatal(err)
	}
	if !exists(paths[0]) {
		t.Fatal("a placeholder was removed while a begun run may rely on it")
	}
	if _, err := second.Release(); err != nil {
		t.Fatal(err)
	}
	if exists(paths[0]) {
		t.Error("left behind after the last run ended")
	}
}
