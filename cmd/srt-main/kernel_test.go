//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"srt.dev/internal/testenv"
)

// The test binary is also the probe that runs inside the sandbox: with
// SRT_KERNEL_PROBE=1 it tries the kernel interfaces a sandbox must not
// reach and prints one name=value line each.
func init() {
	if os.Getenv("SRT_KERNEL_PROBE") == "1" {
		fmt.Print(kernelProbe())
		os.Exit(0)
	}
}

func kernelProbe() string {
	var b strings.Builder
	put := func(k, v string) { fmt.Fprintf(&b, "%s=%s\n", k, v) }
	outcome := func(err error) string {
		var errno syscall.Errno
		switch {
		case err == nil:
			return "ok"
		case errors.As(err, &errno):
			return unix.ErrnoName(errno)
		}
		return err.Error()
	}
	for _, p := range []string{"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/domainname", "/proc/sys/vm/drop_caches"} {
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err == nil {
			f.Close() // opened for writing, nothing written
		}
		put("write "+p, outcome(err))
	}
	keys, err := os.ReadFile("/proc/keys")
	put("read /proc/keys", fmt.Sprintf("%d bytes %s", len(keys), outcome(err)))
	fw, err := os.ReadDir("/sys/firmware")
	put("list /sys/firmware", fmt.Sprintf("%d entries %s", len(fw), outcome(err)))
	if desc := os.Getenv("SRT_KEY_DESC"); desc != "" {
		id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", desc, 0)
		secret := ""
		if err == nil {
			buf := make([]byte, 64)
			n, rerr := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
			err = rerr
			if rerr == nil {
				secret = " " + string(buf[:n])
			}
		}
		put("read session key", outcome(err)+secret)
		_, err = unix.AddKey("user", desc+"-planted-"+os.Getenv("SRT_PROBE_RUN"), []byte("x"), unix.KEY_SPEC_SESSION_KEYRING)
		put("plant session key", outcome(err))
	}
	if k := os.Getenv("SRT_SHM_KEY"); k != "" {
		key, _ := strconv.Atoi(k)
		_, err := unix.SysvShmGet(key, 0, 0)
		put("attach host shm", outcome(err))
	}
	for _, ns := range []string{"ipc", "uts", "cgroup"} {
		l, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			l = outcome(err)
		}
		put("ns "+ns, l)
	}
	return b.String()
}

// probeResult parses the probe's output.
func probeResult(t *testing.T, out string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("probe output %q", out)
		}
		m[k] = v
	}
	return m
}

// TestKernelInterfaces attacks the host kernel from inside the sandbox, as
// root and as nobody, and checks each attempt against a control run of the
// same probe under a bare bubblewrap (which shows the probe can see the
// hole): host sysctls, the caller's session keyring, the host's System V
// IPC, firmware tables and /proc/keys.
func TestKernelInterfaces(t *testing.T) {
	requireSandbox(t)
	bwrap := testenv.Require(t, "bwrap")[0]
	root := publicDir(t)
	prober := testenv.PublicCopy(t, "probe") // the test binary, as the probe

	// A secret in the caller's session keyring, and a shared-memory
	// segment of the host. Keyrings belong to a thread's credentials: when
	// the caller has no session keyring, add_key gives one to this thread
	// only, so the children are started from this thread too.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	desc := fmt.Sprintf("srt-test-%d", os.Getpid())
	keyID, err := unix.AddKey("user", desc, []byte("s3cret"), unix.KEY_SPEC_SESSION_KEYRING)
	if err != nil {
		t.Fatalf("add_key on the host: %v", err)
	}
	t.Cleanup(func() {
		unix.KeyctlInt(unix.KEYCTL_INVALIDATE, keyID, 0, 0, 0)
		for _, run := range []string{"bare", "srt"} {
			id, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", desc+"-planted-"+run, 0)
			if err == nil {
				unix.KeyctlInt(unix.KEYCTL_INVALIDATE, id, 0, 0, 0)
			}
			if run == "srt" && err == nil {
				t.Errorf("a key was planted in the caller's session keyring from inside the sandbox")
			}
		}
	})
	shmKey := 0x5157_0000 + os.Getpid()%0xffff
	shmID, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		t.Fatalf("shmget on the host: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(shmID, unix.IPC_RMID, nil) })
	hostNS := map[string]string{}
	for _, ns := range []string{"ipc", "uts", "cgroup"} {
		link, err := os.Readlink("/proc/self/ns/" + ns)
		if err != nil {
			t.Fatal(err)
		}
		hostNS[ns] = link
	}

	settings := filepath.Join(root, "s.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	env := []string{"SRT_KEY_DESC=" + desc, "SRT_SHM_KEY=" + strconv.Itoa(shmKey)}
	probe := func(run string) []string {
		return []string{"env", "SRT_KERNEL_PROBE=1", "SRT_PROBE_RUN=" + run, prober}
	}

	users := testUsers()
	// One loop, not subtests: a subtest runs on another goroutine, and so
	// on a thread without the keyring.
	for _, uid := range users {
		func() {
			home := filepath.Join(root, fmt.Sprintf("home%d", uid))
			testenv.MkdirAll(t, home, 0o755)
			testenv.Chown(t, home, uid, uid)
			as := func(cmd *exec.Cmd) *exec.Cmd {
				cmd.Dir = home
				cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp", "SRTC=" + os.Getenv("SRTC")}, append(warmSetting(), env...)...)
				if uid != os.Geteuid() {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
				}
				return cmd
			}
			run := func(cmd *exec.Cmd) map[string]string {
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v\n%s", cmd.Args, err, stderr.String())
				}
				return probeResult(t, string(out))
			}
			// The control: the same probe under bubblewrap as the
			// reference runs it (fresh /proc, new user, PID and network
			// namespaces, no seccomp).
			bareArgs := []string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--cap-drop", "ALL", "--"}
			bare := run(as(exec.Command(bwrap, append(bareArgs, probe("bare")...)...)))
			// The sandbox: srt with its own settings file.
			got := run(as(exec.Command(srtBin, append([]string{"--settings", settings, "--"}, probe("srt")...)...)))
			t.Logf("uid %d, bare bubblewrap: %v", uid, bare)
			t.Logf("uid %d, srt: %v", uid, got)

			for _, p := range []string{"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/domainname", "/proc/sys/vm/drop_caches"} {
				if v := got["write "+p]; v == "ok" {
					t.Errorf("uid %d: %s is writable inside the sandbox", uid, p)
				}
			}
			if uid == 0 && bare["write /proc/sys/kernel/core_pattern"] != "ok" {
				t.Errorf("control: core_pattern not writable under bare bubblewrap as root (%s): the probe cannot see the hole", bare["write /proc/sys/kernel/core_pattern"])
			}
			// Hidden by /dev/null on a nodev mount: nothing, or EACCES.
			if v := got["read /proc/keys"]; !strings.HasPrefix(v, "0 bytes") {
				t.Errorf("uid %d: /proc/keys inside the sandbox: %s, want nothing", uid, v)
			}
			if v := got["list /sys/firmware"]; !strings.HasPrefix(v, "0 entries") {
				t.Errorf("uid %d: /sys/firmware inside the sandbox: %s, want it empty", uid, v)
			}
			if v := got["read session key"]; v != "EPERM" {
				t.Errorf("uid %d: reading the caller's session key: %s, want EPERM", uid, v)
			}
			if v := got["plant session key"]; v != "EPERM" {
				t.Errorf("uid %d: planting a session key: %s, want EPERM", uid, v)
			}
			if uid == 0 && bare["read session key"] != "ok s3cret" {
				t.Errorf("control: the session key reads %q under bare bubblewrap: the probe cannot see the hole", bare["read session key"])
			}
			if v := got["attach host shm"]; v != "ENOENT" {
				t.Errorf("uid %d: the host's shared-memory segment from inside: %s, want ENOENT", uid, v)
			}
			if v := bare["attach host shm"]; v != "ok" && v != "EACCES" {
				t.Errorf("uid %d, control: the host's segment is %s under bare bubblewrap: the probe cannot see the hole", uid, v)
			}
			for _, ns := range []string{"ipc", "uts", "cgroup"} {
				if got["ns "+ns] == hostNS[ns] {
					t.Errorf("uid %d: the sandbox shares the host's %s namespace (%s)", uid, ns, hostNS[ns])
				}
			}
		}()
	}
}
