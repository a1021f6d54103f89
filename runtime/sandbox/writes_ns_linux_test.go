//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/initstep"
)

// watchNSChild is the child of TestWriteWatchOwnNamespace, under the
// watch: in its working directory, a write the host's mounts allow, then,
// in a mount namespace of its own, one a read-only mount of that
// namespace refuses (d/f) and one that succeeds (e).
func watchNSChild() {
	sh := exec.Command("/bin/sh", "-c", `echo x > a && mkdir d && unshare -rm sh -c 'mount -t tmpfs none d && mount -o remount,ro d && ! (echo x > d/f) 2>/dev/null && echo x > e'`)
	sh.Stdout, sh.Stderr = os.Stderr, os.Stderr
	if err := sh.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestWriteWatchOwnNamespace: once a process of the sandbox may have a
// mount namespace of its own (unshare with CLONE_NEWNS), the watch judges
// each call by its own process's mounts, not by those it saw first: the
// write a read-only mount of the new namespace refused is reported, and
// those that succeeded are not.
func TestWriteWatchOwnNamespace(t *testing.T) {
	testenv.Require(t, "unshare")
	if len(initstep.WatchedCalls) == 0 {
		t.Skip("no write watch on this architecture")
	}
	if err := exec.Command("unshare", "-rm", "true").Run(); err != nil {
		t.Skipf("no user namespace for this user: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	child, host := os.NewFile(uintptr(pair[1]), "child"), os.NewFile(uintptr(pair[0]), "host")
	defer host.Close()
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), watchBenchEnv+"=ns")
	cmd.ExtraFiles = []*os.File{child}
	out, err := os.CreateTemp(dir, "out")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child.Close()
	h, err := receiveWatch(host)
	if err != nil {
		t.Fatal(err)
	}
	w, err := newWriteWatch(h)
	if err != nil {
		t.Fatal(err)
	}
	host.Write([]byte{1})
	werr := cmd.Wait()
	refusals, count, calls := w.stop()
	if werr != nil {
		b, _ := os.ReadFile(out.Name())
		t.Fatalf("child: %v\n%s", werr, b)
	}
	want := filepath.Join(dir, "d", "f")
	if count != 1 || len(refusals) != 1 || refusals[0].Path != want || refusals[0].Access != "create" {
		t.Errorf("refusals %+v (%d, %d calls), want one: create %s", refusals, count, calls, want)
	}
}
