//go:build linux

package testenv

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"srt.dev/internal/kaudit"
)

// KernelAudit turns the kernel's audit on for the rest of the test, for
// the tests that check what srt reports of the second layer's refusals
// (docs/layers.md): srt reads them only while it is on, and never turns
// it on itself. It puts the audit back as it was when the test ends. It
// needs root on the host and Landlock ABI 7 (Linux 6.15): without them
// the test is skipped. Tests of every package take turns through a lock
// file, so that none turns the audit off under another.
//
// While it is on, every audit record of the host also reaches the
// kernel's log (rate-limited) when no auditd runs.
func KernelAudit(t testing.TB) {
	t.Helper()
	if v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); errno != 0 || v < 7 {
		t.Skipf("the kernel logs Landlock's refusals from Landlock ABI 7 (Linux 6.15); this one has ABI %d (%v)", v, errno)
	}
	kernelAudit(t, true)
}

// KernelAuditOff turns the kernel's audit off for the rest of the test,
// as KernelAudit turns it on.
func KernelAuditOff(t testing.TB) {
	t.Helper()
	kernelAudit(t, false)
}

func kernelAudit(t testing.TB, on bool) {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "srt-test-kernel-audit.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Skipf("the kernel's audit: %v", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		lock.Close()
		t.Fatal(err)
	}
	st, err := kaudit.Get()
	if err != nil {
		lock.Close()
		t.Skipf("the kernel's audit is not readable here (%v): it takes root on the host", err)
	}
	was := st.Enabled != 0
	if was != on {
		if err := kaudit.SetEnabled(on); err != nil {
			lock.Close()
			t.Fatalf("turning the kernel's audit on=%v: %v", on, err)
		}
	}
	t.Cleanup(func() {
		if was != on {
			if err := kaudit.SetEnabled(was); err != nil {
				t.Errorf("putting the kernel's audit back (on=%v): %v", was, err)
			}
		}
		lock.Close()
	})
}
