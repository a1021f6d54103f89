//go:build linux

package sandbox

// Resource limits of one sandbox (@limit, limits.* in the settings). The
// host puts the sandbox's first process in cgroups of its own where it
// may make them (below the cgroups srt runs in: whatever limits the host
// sets on srt still hold), and the init step sets rlimits, which every
// process it starts inherits:
//
//	memory-mib   cgroup: the sandbox's memory, socket buffers included
//	             (the kernel kills inside it when it is full; on cgroup v1
//	             socket buffers have a counter of their own: see
//	             memoryLimits); otherwise RLIMIT_DATA, per process
//	processes    cgroup: processes and threads of the sandbox (pids);
//	             RLIMIT_NPROC too, which the kernel counts per user
//	             namespace (the sandbox's own) and does not apply to root
//	cpu-seconds  RLIMIT_CPU per process (SIGXCPU, then SIGKILL a second
//	             later); with a cgroup, srt also stops the sandbox when all
//	             of it has used that much
//	open-files   RLIMIT_NOFILE per process
//
// See docs/layers.md#resource-limits.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"srt.dev/compiler/policy"
	"srt.dev/internal/periodic"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/violations"
)

// A limitsPlan is how this run enforces its plan's limits.
type limitsPlan struct {
	limits []resolve.Limit
	// cg are the controllers the run uses, by limit kind; the cgroups
	// are made when the run starts.
	cg *cgroupSet
	// initArgs are the init step's --rlimit options, each with the line of
	// linux/bwrap.args it comes from.
	initArgs []initArg
	// notes say how each limit is enforced (--debug); warnings what is
	// not enforced at all (always printed).
	notes, warnings []string
}

// An initArg is one option of the init step, and its line of the plan.
type initArg struct {
	arg  string
	line int
}

// planLimits decides how the limits are enforced on this host.
func planLimits(limits []resolve.Limit) *limitsPlan {
	lp := &limitsPlan{limits: limits}
	if len(limits) == 0 {
		return lp
	}
	want := map[string]bool{}
	for _, l := range limits {
		switch l.Kind {
		case policy.LimitMemory:
			want["memory"] = true
		case policy.LimitProcesses:
			want["pids"] = true
		case policy.LimitCPU:
			want["cpu"] = true
		}
	}
	lp.cg = findCgroups(want)
	for _, l := range limits {
		key := limitKey(l.Kind)
		switch l.Kind {
		case policy.LimitMemory:
			switch {
			case lp.cg.has("memory") && lp.cg.v2:
				lp.notes = append(lp.notes, fmt.Sprintf("%s: the sandbox's memory, in cgroup %s: memory.max counts user memory, kernel memory and socket buffers together", key, lp.cg.dir["memory"]))
			case lp.cg.has("memory"):
				user, sockets := memoryLimits(l.Value << 20)
				lp.notes = append(lp.notes, fmt.Sprintf("%s: the sandbox's memory, in cgroup %s: %d MiB of user and kernel memory (memory.limit_in_bytes), %d MiB of TCP and UDP socket buffers (memory.kmem.tcp.limit_in_bytes)", key, lp.cg.dir["memory"], user>>20, sockets>>20))
			default:
				b := uint64(l.Value) << 20
				lp.initArgs = append(lp.initArgs, initArg{fmt.Sprintf("%sdata=%d:%d", initstep.RlimitArg, b, b), l.Line})
				lp.notes = append(lp.notes, key+": no memory cgroup srt may make here: RLIMIT_DATA, per process (its heap and data; kernel memory, socket and pipe buffers are not counted)")
			}
		case policy.LimitProcesses:
			lp.initArgs = append(lp.initArgs, initArg{fmt.Sprintf("%snproc=%d:%d", initstep.RlimitArg, l.Value, l.Value), l.Line})
			switch {
			case lp.cg.has("pids"):
				lp.notes = append(lp.notes, fmt.Sprintf("%s: the sandbox's processes and threads, in cgroup %s", key, lp.cg.dir["pids"]))
			case os.Geteuid() == 0:
				lp.warnings = append(lp.warnings, key+" is not enforced: srt runs as root, whom RLIMIT_NPROC does not bind, and no pids cgroup could be made here (srt doctor)")
			default:
				lp.notes = append(lp.notes, key+": RLIMIT_NPROC, counted in the sandbox's user namespace")
			}
		case policy.LimitCPU:
			lp.initArgs = append(lp.initArgs, initArg{fmt.Sprintf("%scpu=%d:%d", initstep.RlimitArg, l.Value, l.Value+1), l.Line})
			if lp.cg.has("cpu") {
				lp.notes = append(lp.notes, fmt.Sprintf("%s: RLIMIT_CPU per process, and the whole sandbox's CPU time in cgroup %s", key, lp.cg.dir["cpu"]))
			} else {
				lp.notes = append(lp.notes, key+": RLIMIT_CPU, per process")
			}
		case policy.LimitOpenFiles:
			lp.initArgs = append(lp.initArgs, initArg{fmt.Sprintf("%snofile=%d:%d", initstep.RlimitArg, l.Value, l.Value), l.Line})
		}
	}
	return lp
}

// limitKey is the settings key of a limit kind.
func limitKey(k policy.LimitKind) string {
	for _, lk := range policy.LimitKinds {
		if lk.Kind == k {
			return lk.Key
		}
	}
	return string(k)
}

// A cgroupSet is the cgroups of one run: one per controller srt uses (the
// same directory for all of them on cgroup v2).
type cgroupSet struct {
	v2 bool
	// parent is the cgroup srt runs in, and dir the run's own below it,
	// by controller ("memory", "pids", "cpu").
	parent, dir map[string]string
	made        []string // directories made, to remove
}

func (c *cgroupSet) has(ctrl string) bool { return c != nil && c.dir[ctrl] != "" }

// any reports whether the run makes a cgroup.
func (c *cgroupSet) any() bool { return c != nil && len(c.dir) > 0 }

// dirs are the run's cgroup directories, each once.
func (c *cgroupSet) dirs() []string {
	var out []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		if d := c.dir[ctrl]; d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// findCgroups finds, for each controller wanted, a cgroup srt runs in
// below which it may make one (a directory it can write); it makes
// nothing yet. On cgroup v1 each controller has its hierarchy (cpuacct
// accounts CPU time); on v2 one directory holds them all, and the
// controller must be enabled for its children already.
func findCgroups(want map[string]bool) *cgroupSet {
	c := &cgroupSet{parent: map[string]string{}, dir: map[string]string{}}
	own, mounts := ownCgroups()
	name := fmt.Sprintf("srt-%d-%d", os.Getpid(), time.Now().UnixNano())
	v1 := map[string]string{"memory": "memory", "pids": "pids", "cpu": "cpuacct"}
	for ctrl := range want {
		if p, ok := own[v1[ctrl]]; ok {
			if m, ok := mounts[v1[ctrl]]; ok && writableDir(filepath.Join(m, p)) {
				c.parent[ctrl] = filepath.Join(m, p)
				c.dir[ctrl] = filepath.Join(m, p, name)
			}
			continue
		}
		// cgroup v2: the controller is enabled below srt's cgroup.
		p, ok1 := own[""]
		m, ok2 := mounts[""]
		if !ok1 || !ok2 {
			continue
		}
		parent := filepath.Join(m, p)
		sub, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if slices.Contains(strings.Fields(string(sub)), ctrl) && writableDir(parent) {
			c.v2 = true
			c.parent[ctrl] = parent
			c.dir[ctrl] = filepath.Join(parent, name)
		}
	}
	return c
}

// writableDir reports whether this process may make a directory in dir.
func writableDir(dir string) bool {
	return unix.Access(dir, unix.W_OK|unix.X_OK) == nil
}

// ownCgroups reads /proc/self/cgroup and /proc/self/mountinfo: the path of
// this process's cgroup in each v1 hierarchy by controller ("" for v2),
// relative to where that hierarchy is mounted, and the mount points.
func ownCgroups() (own, mounts map[string]string) {
	own, mounts = map[string]string{}, map[string]string{}
	roots := map[string]string{}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			// id parent major:minor root mountpoint options... - fstype source superoptions
			pre, post, ok := strings.Cut(sc.Text(), " - ")
			f, g := strings.Fields(pre), strings.Fields(post)
			if !ok || len(f) < 5 || len(g) < 3 {
				continue
			}
			switch g[0] {
			case "cgroup2":
				mounts[""], roots[""] = f[4], f[3]
			case "cgroup":
				for _, o := range strings.Split(g[2], ",") {
					if _, seen := mounts[o]; !seen {
						mounts[o], roots[o] = f[4], f[3]
					}
				}
			}
		}
	}
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls := strings.Split(parts[1], ",")
		if parts[1] == "" {
			ctrls = []string{""}
		}
		for _, ctrl := range ctrls {
			p := parts[2]
			if r := roots[ctrl]; r != "" && r != "/" {
				var ok bool
				if p, ok = strings.CutPrefix(p, r); !ok {
					continue // the cgroup is outside what is mounted
				}
			}
			own[ctrl] = p
		}
	}
	return own, mounts
}

// make makes the run's cgroups and sets the limits in them.
func (c *cgroupSet) make(limits []resolve.Limit) error {
	if c == nil {
		return nil
	}
	done := map[string]bool{}
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		d := c.dir[ctrl]
		if d == "" || done[d] {
			continue
		}
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("making the sandbox's cgroup: %w", err)
		}
		done[d] = true
		c.made = append(c.made, d)
	}
	for _, l := range limits {
		var err error
		switch {
		case l.Kind == policy.LimitMemory && c.has("memory"):
			err = c.limitMemory(l.Value << 20)
		case l.Kind == policy.LimitProcesses && c.has("pids"):
			err = writeCg(c.dir["pids"], "pids.max", strconv.FormatInt(l.Value, 10))
		}
		if err != nil {
			return fmt.Errorf("setting %s in the sandbox's cgroup: %w", limitKey(l.Kind), err)
		}
	}
	return nil
}

// limitMemory sets the memory limit (bytes) in the run's memory cgroup.
// On cgroup v2 memory.max counts everything the kernel charges to the
// cgroup, socket buffers included. On v1, socket buffers are charged to a
// counter of their own (memory.kmem.tcp), which counts only once a limit
// is written there: without one, a command could pin any amount of
// kernel memory in the buffers of sockets it does not read. The limit is
// split between the two (memoryLimits), so that together they hold to
// what the settings say; a v1 cgroup whose socket buffers cannot be
// bounded is refused.
func (c *cgroupSet) limitMemory(b int64) error {
	d := c.dir["memory"]
	if c.v2 {
		if err := writeCg(d, "memory.max", strconv.FormatInt(b, 10)); err != nil {
			return err
		}
		writeCg(d, "memory.swap.max", "0") // absent without swap accounting
		return nil
	}
	user, sockets := memoryLimits(b)
	if err := writeCg(d, "memory.kmem.tcp.limit_in_bytes", strconv.FormatInt(sockets, 10)); err != nil {
		return fmt.Errorf("bounding the sandbox's socket buffers, which cgroup v1 counts apart from its memory: %w", err)
	}
	if err := writeCg(d, "memory.limit_in_bytes", strconv.FormatInt(user, 10)); err != nil {
		return err
	}
	writeCg(d, "memory.memsw.limit_in_bytes", strconv.FormatInt(user, 10)) // absent without swap accounting
	return nil
}

// memoryLimits splits a memory limit of b bytes for cgroup v1: sockets
// for the buffers of the sandbox's TCP and UDP sockets (a quarter, at
// most 64 MiB: when they are full, TCP waits and UDP drops, nothing is
// killed), user for everything else the kernel charges to the cgroup.
func memoryLimits(b int64) (user, sockets int64) {
	sockets = min(b/4, 64<<20)
	return b - sockets, sockets
}

// writeCg writes value to a cgroup's file, which must exist: a control
// this kernel lacks is an error, never a new file.
func writeCg(dir, file, value string) error {
	f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	return errors.Join(err, f.Close())
}

// join moves process pid (the sandbox's first process, before the command
// starts) into the run's cgroups.
func (c *cgroupSet) join(pid int) error {
	for _, d := range c.made {
		if err := writeCg(d, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("moving the sandbox into its cgroup %s: %w", d, err)
		}
	}
	return nil
}

// remove removes the run's cgroups (placeholders.RemoveCgroups).
func (c *cgroupSet) remove() error {
	if c == nil {
		return nil
	}
	return placeholders.RemoveCgroups(c.made)
}

// cpuUsage is the CPU time the run's cgroup has used.
func (c *cgroupSet) cpuUsage() (time.Duration, bool) {
	d := c.dir["cpu"]
	if c.v2 {
		n, ok := cgField(d, "cpu.stat", "usage_usec")
		return time.Duration(n) * time.Microsecond, ok
	}
	b, err := os.ReadFile(filepath.Join(d, "cpuacct.usage"))
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(n), err == nil
}

// cgField reads "name N" from a flat keyed cgroup file.
func cgField(dir, file, name string) (int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && k == name {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// watchCPU stops the sandbox (kill) once the run's cgroup has used limit
// of CPU time, checking every 100 ms until stop is called, which returns
// once the watch has; hit is closed when it stopped the sandbox.
func (c *cgroupSet) watchCPU(limit time.Duration, kill func()) (hit <-chan struct{}, stop func()) {
	h := make(chan struct{})
	return h, periodic.Every(100*time.Millisecond, func() bool {
		if used, ok := c.cpuUsage(); ok && used >= limit {
			close(h)
			kill()
			return false
		}
		return true
	})
}

// hits says which limits the sandbox reached, from what the cgroups
// counted, whether srt stopped it for its CPU time, and how the command
// ended (a process killed by SIGXCPU reached RLIMIT_CPU).
func (lp *limitsPlan) hits(cpuStopped bool, exitCode int) []LimitHit {
	var out []LimitHit
	for _, l := range lp.limits {
		h := LimitHit{Kind: l.Kind, Key: limitKey(l.Kind), Value: l.Value}
		switch l.Kind {
		case policy.LimitMemory:
			if !lp.cg.has("memory") {
				continue
			}
			file := "memory.oom_control"
			if lp.cg.v2 {
				file = "memory.events"
			}
			if n, ok := cgField(lp.cg.dir["memory"], file, "oom_kill"); ok && n > 0 {
				h.What = fmt.Sprintf("the kernel killed %d process%s, out of memory", n, plural(n, "es"))
			}
		case policy.LimitProcesses:
			if n, ok := cgField(lp.cg.dir["pids"], "pids.events", "max"); lp.cg.has("pids") && ok && n > 0 {
				h.What = fmt.Sprintf("the kernel refused %d new process%s or thread%s", n, plural(n, "es"), plural(n, "s"))
			}
		case policy.LimitCPU:
			switch {
			case cpuStopped:
				h.What = "the sandbox used that much CPU time, and srt stopped it"
			case exitCode == initstep.ExitSignal+int(syscall.SIGXCPU):
				h.What = "the command used that much CPU time, and the kernel stopped it (SIGXCPU)"
			}
		}
		if h.What != "" {
			out = append(out, h)
		}
	}
	return out
}

func plural(n int64, s string) string {
	if n == 1 {
		return ""
	}
	return s
}

// limitUnit is how a limit's value reads.
func limitUnit(k policy.LimitKind) string {
	switch k {
	case policy.LimitMemory:
		return " MiB"
	case policy.LimitCPU:
		return " s"
	}
	return ""
}

// violation is the line of a limit reached, as --violations and the audit
// log show it.
func (h LimitHit) violation(t time.Time) violations.Entry {
	return violations.Entry{Line: fmt.Sprintf("deny limit %s=%d (%s = %d%s: %s)", h.Kind, h.Value, h.Key, h.Value, limitUnit(h.Kind), h.What), Time: t}
}

// limitsDoctor is srt doctor's line on resource limits.
func limitsDoctor() Check {
	c := findCgroups(map[string]bool{"memory": true, "pids": true, "cpu": true})
	var have []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		if c.has(ctrl) {
			have = append(have, ctrl)
		}
	}
	v := "v1"
	if c.v2 {
		v = "v2"
	}
	memory := memoryDoctor(c, cmdlineOptions("cgroup.memory"))
	if len(have) == 3 {
		return Check{Name: "resource limits", OK: true, Detail: "cgroup " + v + ": srt can make memory, pids and CPU-accounting cgroups below its own: limits.* hold for the whole sandbox", Note: memory}
	}
	ck := Check{Name: "resource limits", OK: true, Detail: "rlimits, per process (no cgroup srt may make below its own for: " + strings.Join(missing(have), ", ") + ")",
		Note: "limits.memoryMiB and limits.cpuSeconds then bind each process rather than the sandbox, and srt cannot tell when one was reached (but for SIGXCPU)"}
	if os.Geteuid() == 0 && !c.has("pids") {
		ck.Note += "; limits.processes is not enforced for root without a pids cgroup"
	}
	ck.Note += "; " + memory
	return ck
}

// memoryDoctor says what limits.memoryMiB counts on this host, with the
// options of the kernel's command line for the memory cgroup
// (cgroup.memory=nosocket,nokmem).
func memoryDoctor(c *cgroupSet, opts []string) string {
	switch {
	case !c.has("memory"):
		return "limits.memoryMiB is RLIMIT_DATA: a process's heap and data; kernel memory, socket and pipe buffers are not counted (only the host's net.ipv4.tcp_mem, net.ipv4.udp_mem and fs.pipe-user-pages-* bound them)"
	case c.v2:
		s := "limits.memoryMiB is memory.max, which counts user memory, kernel memory and socket buffers together"
		if slices.Contains(opts, "nosocket") {
			s += "; but this kernel was booted with cgroup.memory=nosocket: socket buffers are not counted"
		}
		if slices.Contains(opts, "nokmem") {
			s += "; but this kernel was booted with cgroup.memory=nokmem: kernel memory (pipe buffers among it) is not counted"
		}
		return s
	}
	if _, err := os.Stat(filepath.Join(c.parent["memory"], "memory.kmem.tcp.limit_in_bytes")); err != nil {
		return "srt refuses limits.memoryMiB here: cgroup v1 counts socket buffers apart from memory, and this kernel has no memory.kmem.tcp.limit_in_bytes to bound them"
	}
	s := "limits.memoryMiB is split, as cgroup v1 counts socket buffers apart: a quarter (at most 64 MiB) for TCP and UDP socket buffers (memory.kmem.tcp.limit_in_bytes), the rest for user and kernel memory (memory.limit_in_bytes)"
	if slices.Contains(opts, "nokmem") {
		s += "; but this kernel was booted with cgroup.memory=nokmem: kernel memory (pipe buffers among it) is not counted"
	}
	return s
}

// cmdlineOptions are the comma-separated values of key=... on the
// kernel's command line.
func cmdlineOptions(key string) []string {
	b, _ := os.ReadFile("/proc/cmdline")
	var out []string
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, key+"="); ok {
			out = append(out, strings.Split(v, ",")...)
		}
	}
	return out
}

func missing(have []string) []string {
	var out []string
	for _, c := range []string{"memory", "pids", "cpu"} {
		if !slices.Contains(have, c) {
			out = append(out, c)
		}
	}
	return out
}
