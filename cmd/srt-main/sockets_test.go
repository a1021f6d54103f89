//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"srt.dev/internal/testenv"
)

// socketProbe fills the buffers of TCP connections, then of UDP sockets,
// on the sandbox's own loopback without reading them, until it has queued
// 256 MiB or the kernel takes no more, and prints how much it queued in
// each. What it queued is a lower bound of the kernel memory it pinned.
const socketProbe = `
import socket, time
LIMIT = 256 << 20

ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
ls.bind(("127.0.0.1", 0))
ls.listen(512)
conns, sent, idle = [], 0, 0
while sent < LIMIT and len(conns) < 256 and idle < 8:
    c = socket.create_connection(ls.getsockname())
    s, _ = ls.accept()
    c.setblocking(False)
    conns.append((c, s))
    before, stall = sent, 0
    while sent < LIMIT and stall < 5:
        try:
            sent += c.send(b"x" * 65536)
            stall = 0
        except BlockingIOError:
            stall += 1
            time.sleep(0.005)
    idle = idle + 1 if sent - before < 65536 else 0
print("tcp queued %d MiB in %d connections" % (sent >> 20, len(conns)), flush=True)
for c, s in conns:  # TCP and UDP may share one count: each starts empty
    c.close()
    s.close()
time.sleep(0.1)

def queued():
    q = 0
    for l in open("/proc/net/udp").readlines()[1:]:
        q += int(l.split()[4].split(":")[1], 16)
    return q
tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
rx, idle = [], 0
while queued() < LIMIT and len(rx) < 256 and idle < 8:
    r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
    r.bind(("127.0.0.1", 0))
    rx.append(r)
    before = queued()
    for i in range(160):
        try:
            tx.sendto(b"x" * 60000, r.getsockname())
        except OSError:
            break
    idle = idle + 1 if queued() - before < 65536 else 0
print("udp queued %d MiB in %d sockets" % (queued() >> 20, len(rx)), flush=True)
`

// TestLimitsSocketBuffers: with limits.memoryMiB = 64, a command that
// fills the buffers of sockets on its own loopback without reading them
// pins no more than the limit allows: TCP and UDP buffers count in it;
// the control, the same command without the limit, queues at least
// twice as much in each.
// As root (srt's cgroups) and as nobody in a memory cgroup delegated to
// it (where srt may make its cgroups too); as nobody without one, srt
// says the limit is RLIMIT_DATA, which does not count them.
func TestLimitsSocketBuffers(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3")
	if !cgroupsHere() {
		t.Skip("srt makes cgroups here only on cgroup v1 with the memory, pids and cpuacct controllers (docs/layers.md)")
	}
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}, "limits": {"memoryMiB": 64}}`
	type as struct {
		uid       int
		delegated bool
	}
	cases := []as{{os.Geteuid(), false}}
	if os.Geteuid() == 0 {
		cases = append(cases, as{65534, true}, as{65534, false})
	} else {
		t.Log("as root, this test also runs as nobody")
	}
	for _, c := range cases {
		name := "uid" + strconv.Itoa(c.uid)
		if c.delegated {
			name += "-delegated"
		}
		t.Run(name, func(t *testing.T) {
			bin, root, proj := publicProject(t)
			testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(settings), 0o644)
			testenv.WriteFile(t, filepath.Join(proj, "unlimited.json"), []byte(strings.Replace(settings, `, "limits": {"memoryMiB": 64}`, "", 1)), 0o644)
			testenv.WriteFile(t, filepath.Join(proj, "probe.py"), []byte(socketProbe), 0o644)
			cg := ""
			if c.delegated {
				cg = delegateMemoryCgroup(t, c.uid)
			}
			if c.uid != 0 && !c.delegated {
				code, out := srtIn(t, bin, c.uid, root, proj, "", "--settings", "s.json", "--debug", "-c", "true")
				if code != 0 || !strings.Contains(out, "limits.memoryMiB: no memory cgroup srt may make here: RLIMIT_DATA, per process (its heap and data; kernel memory, socket and pipe buffers are not counted)") {
					t.Errorf("exit %d; want srt to say that the limit does not count socket buffers here:\n%s", code, out)
				}
				return
			}
			// The control: the same probe in the same sandbox without
			// limits.memoryMiB queues at least twice the limit in each,
			// so the bound below is one the limit makes, not the probe.
			code, out := srtIn(t, bin, c.uid, root, proj, cg, "--settings", "unlimited.json", "-c", "python3 probe.py")
			if code != 0 {
				t.Fatalf("control: exit %d:\n%s", code, out)
			}
			for proto, n := range queued(t, out) {
				if n < 2*64 {
					t.Fatalf("control: without limits.memoryMiB the command queued only %d MiB in its %s sockets' buffers, want at least %d: the test does not test", n, proto, 2*64)
				}
			}
			code, out = srtIn(t, bin, c.uid, root, proj, cg, "--settings", "s.json", "--debug", "-c", "python3 probe.py")
			if code != 0 || !strings.Contains(out, "limits.memoryMiB: the sandbox's memory, in cgroup ") {
				t.Fatalf("exit %d; want the probe to run in a memory cgroup:\n%s", code, out)
			}
			if !strings.Contains(out, ": 48 MiB of user and kernel memory (memory.limit_in_bytes), 16 MiB of TCP and UDP socket buffers (memory.kmem.tcp.limit_in_bytes)") {
				t.Errorf("srt does not say how the limit is split")
			}
			for proto, n := range queued(t, out) {
				if n >= 2*64 || n < 4 {
					t.Errorf("%s: the command queued %d MiB in its sockets' buffers with limits.memoryMiB = 64 (want some, and well below twice the limit)", proto, n)
				}
			}
			// The run's own cgroup is gone (others' may be alive).
			if m := regexp.MustCompile(`in cgroup (/sys/fs/cgroup/\S+/srt-[0-9-]+)`).FindStringSubmatch(out); m == nil {
				t.Errorf("srt did not name the run's memory cgroup")
			} else if _, err := os.Stat(m[1]); err == nil {
				t.Errorf("the run's cgroup %s is left behind", m[1])
			}
		})
	}
}

// queued is what socketProbe printed it queued, in MiB, by protocol
// ("tcp", "udp"); it fails the test when a figure is missing.
func queued(t *testing.T, out string) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, proto := range []string{"tcp", "udp"} {
		m := regexp.MustCompile(proto + ` queued (\d+) MiB.*`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %s figure in:\n%s", proto, out)
		}
		t.Log(m[0])
		got[proto], _ = strconv.Atoi(m[1])
	}
	return got
}

// delegateMemoryCgroup makes a memory cgroup below the test's own that
// uid may write (as a host delegates one), removed after the test.
func delegateMemoryCgroup(t *testing.T, uid int) string {
	t.Helper()
	b, _ := os.ReadFile("/proc/self/cgroup")
	m := regexp.MustCompile(`(?m)^\d+:memory:(.*)$`).FindSubmatch(b)
	if m == nil {
		t.Skip("no memory cgroup v1 hierarchy")
	}
	d := filepath.Join("/sys/fs/cgroup/memory", string(m[1]), fmt.Sprintf("delegated-test-%d", os.Getpid()))
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(d) })
	filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	return d
}

// srtIn runs srt as srtAs does, first moved into the cgroup cg (v1, the
// memory hierarchy) when cg is not "".
func srtIn(t *testing.T, bin string, uid int, root, dir, cg string, args ...string) (int, string) {
	t.Helper()
	filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
	cmd := exec.Command(bin, args...)
	if cg != "" {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `echo $$ > "$CG/cgroup.procs" && exec "$@"`, "sh", bin}, args...)...)
	}
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + root, "PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp", "SRTC=" + os.Getenv("SRTC"), "CG=" + cg,
		"XDG_STATE_HOME=" + filepath.Join(root, "state"), "XDG_CACHE_HOME=" + filepath.Join(root, "cache")}, warmSetting()...)
	if uid != os.Geteuid() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("srt: %v\n%s", err, out)
	}
	return code, string(out)
}
