//go:build linux

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// TestManyRunsAtOnce starts many sandboxes at once in one project that
// lets them write it, and checks that nothing is left once they have all
// ended: no placeholder in the project (.bashrc, .gitconfig, .claude, ...),
// no record, new record or scratch directory in srt's registry, no
// temporary directory of a run. As root, 200 at once; as nobody, 5 waves
// of 40 (each wave begins while no run is alive, as the first runs of a
// burst do, where a run's start meets the clean-up of the runs before).
// The control: while one run is alive, each place holds something of it.
// SRT_LOAD_RUNS=N starts N at once in each.
func TestManyRunsAtOnce(t *testing.T) {
	requireSandbox(t)
	type load struct{ waves, runs int }
	loads := map[int]load{os.Geteuid(): {1, 200}}
	if os.Geteuid() == 0 {
		loads[65534] = load{5, 40}
	}
	if n, err := strconv.Atoi(os.Getenv("SRT_LOAD_RUNS")); err == nil {
		for uid := range loads {
			loads[uid] = load{1, n}
		}
	}
	for uid, l := range loads {
		t.Run("uid"+strconv.Itoa(uid), func(t *testing.T) {
			bin, root := srtBin, publicDir(t)
			proj := filepath.Join(root, "proj")
			for _, d := range []string{proj, filepath.Join(root, "tmp"), filepath.Join(root, "cache"), filepath.Join(root, "state")} {
				testenv.MkdirAll(t, d, 0o755)
			}
			testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
			filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
			env := append([]string{"HOME=" + root, "PATH=" + os.Getenv("PATH"), "SRTC=" + os.Getenv("SRTC"),
				"TMPDIR=" + filepath.Join(root, "tmp"), "XDG_CACHE_HOME=" + filepath.Join(root, "cache"), "XDG_STATE_HOME=" + filepath.Join(root, "state")}, warmSetting()...)

			reg := filepath.Join(root, "cache", "srt", "placeholders")
			tmp := filepath.Join(root, "tmp", "srt-"+strconv.Itoa(uid), "tmp")
			newRun := func(args ...string) *exec.Cmd {
				cmd := exec.Command(bin, append([]string{"--settings", "s.json", "-c"}, args...)...)
				cmd.Dir, cmd.Env = proj, env
				if uid != os.Geteuid() {
					cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
				}
				return cmd
			}
			aliveLeaves(t, newRun("echo started && cat >/dev/null"), proj, reg, tmp)

			start := time.Now()
			var mu sync.Mutex
			failed := map[string]int{}
			for range l.waves {
				var wg sync.WaitGroup
				for range l.runs {
					cmd := newRun("true")
					wg.Go(func() {
						if out, err := cmd.CombinedOutput(); err != nil {
							mu.Lock()
							failed[err.Error()+": "+string(out)]++
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			t.Logf("%d waves of %d runs at once as uid %d: %v", l.waves, l.runs, uid, time.Since(start))
			for why, k := range failed {
				t.Errorf("%d runs failed: %s", k, why)
			}

			// A warm server's next sandbox has its placeholders, record and
			// temporary directory while it waits.
			stopWarmServers(t, root)
			if left := entries(t, proj); strings.Join(left, " ") != "s.json" {
				t.Errorf("left in the project: %v", left)
			}
			for _, e := range entries(t, reg) {
				if e != "registry.lock" && e != "check.lock" {
					t.Errorf("left in the registry: %s", e)
				}
			}
			if left := entries(t, tmp); len(left) > 0 {
				t.Errorf("runs' temporary directories left in %s: %v", tmp, left)
			}
		})
	}
}

// aliveLeaves is the control of TestManyRunsAtOnce: while run (a command
// that prints "started", then waits for its standard input to close) is
// alive, the project holds placeholders, the registry its record and the
// host's temporary directory its own: where the test looks once the runs
// have ended, there is something to remove.
func aliveLeaves(t *testing.T, run *exec.Cmd, proj, reg, tmp string) {
	t.Helper()
	in, err := run.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := run.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	run.Stderr = &errb
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		if err := run.Wait(); err != nil {
			t.Fatalf("control run: %v\n%s", err, errb.String())
		}
	}()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "started\n" {
		in.Close()
		run.Wait()
		t.Fatalf("control run: printed %q, not started:\n%s", line, errb.String())
	}
	if left := entries(t, proj); len(left) < 2 || !slices.Contains(left, ".bashrc") {
		t.Errorf("control: while a run is alive, the project holds %v; want placeholders (.bashrc, ...)", left)
	}
	if !slices.ContainsFunc(entries(t, reg), func(e string) bool { return strings.HasPrefix(e, "run-") }) {
		t.Errorf("control: while a run is alive, the registry %s holds %v; want its record", reg, entries(t, reg))
	}
	if len(entries(t, tmp)) == 0 {
		t.Errorf("control: while a run is alive, %s holds no temporary directory of it", tmp)
	}
}

// entries lists the names in dir (none when it does not exist).
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestRegistryLockOutOfReach: no sandboxed command can open the registry's
// locks (write-only, in a directory read-only in every sandbox), so none
// can hold them to stall the start or the clean-up of other runs. As root
// and as nobody.
func TestRegistryLockOutOfReach(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3")
	users := testUsers()
	for _, uid := range users {
		t.Run("uid"+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
			testenv.WriteFile(t, filepath.Join(proj, "open.py"), []byte(`import errno, fcntl, os, sys
for p in sys.argv[1:]:
    for how, flags in (("read", os.O_RDONLY), ("write", os.O_WRONLY), ("read-write", os.O_RDWR)):
        try:
            fd = os.open(p, flags)
        except OSError as e:
            print(os.path.basename(p), how, errno.errorcode[e.errno])
            continue
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        print(os.path.basename(p), how, "opened and locked")
`), 0o644)
			reg := filepath.Join(root, "cache", "srt", "placeholders")
			// A first run makes the registry and its lock.
			if code, out := srtAs(t, bin, uid, root, proj, "--settings", "s.json", "-c", "true"); code != 0 {
				t.Fatalf("srt: exit %d\n%s", code, out)
			}
			lock := filepath.Join(reg, "registry.lock")
			if fi, err := os.Stat(lock); err != nil || fi.Mode().Perm() != 0o200 {
				t.Fatalf("registry.lock: %v, %v; want mode 0200", fi, err)
			}
			code, out := srtAs(t, bin, uid, root, proj, "--settings", "s.json", "-c", "python3 open.py "+lock)
			refused := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "registry.lock ") {
					refused++
				}
			}
			// The refusal line names srt's own file.
			if code != 0 || strings.Contains(out, "opened") || refused != 3 || !strings.Contains(out, "srt sandbox refused writing "+lock+": it is srt's own (") {
				t.Errorf("exit %d, want the lock refused to every open:\n%s", code, out)
			}
		})
	}
}
