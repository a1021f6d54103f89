//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"

	"golang.org/x/sys/unix"
)

// Doctor probes what this host allows: bubblewrap and its version, user
// and network namespaces, seccomp, Landlock, and the AppArmor restriction
// of unprivileged user namespaces. bwrap "" means bwrap on PATH.
func Doctor(bwrap string) []Check {
	var checks []Check
	add := func(c Check) { checks = append(checks, c) }
	add(whoChecks())

	path := bwrap
	if path == "" {
		path, _ = exec.LookPath("bwrap")
	}
	if path == "" {
		add(Check{Name: "bubblewrap", Detail: "not found on PATH", Remedy: "install it: apt-get install bubblewrap (or dnf install bubblewrap)"})
	} else {
		out, err := exec.Command(path, "--version").Output()
		v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "bubblewrap "))
		ok := err == nil && versionAtLeast(v, 0, 8)
		add(Check{Name: "bubblewrap", OK: ok, Detail: path + " " + v, Remedy: "srt needs bubblewrap 0.8.0 or later (--as-pid-1, --add-seccomp-fd): upgrade it"})
		if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeSetuid != 0 {
			add(Check{Name: "bubblewrap not setuid", Detail: path + " is setuid root", Remedy: "use a bubblewrap that is not setuid; unprivileged user namespaces must work instead"})
		}
		run := exec.Command(path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "--unshare-net", "--unshare-pid", "--die-with-parent", "true")
		out, err = run.CombinedOutput()
		detail := strings.TrimSpace(string(out))
		switch {
		case err == nil:
			detail = "bwrap ran a command in new user, network and PID namespaces"
		case detail == "":
			detail = err.Error()
		}
		add(Check{Name: "user and network namespaces", OK: err == nil, Detail: detail,
			Remedy: "enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; in a container: run it with --security-opt seccomp=unconfined or a profile allowing CLONE_NEWUSER)"})
		// Every sandbox also takes IPC, UTS and (where the kernel has one)
		// cgroup namespaces, a fresh /proc and a read-only /proc/sys.
		run = exec.Command(path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "--unshare-net", "--unshare-pid",
			"--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--proc", "/proc", "--ro-bind-try", "/proc/sys", "/proc/sys", "--die-with-parent", "true")
		out, err = run.CombinedOutput()
		detail = "IPC and UTS namespaces, a fresh /proc with /proc/sys read-only"
		if err != nil {
			detail = strings.TrimSpace(string(out))
		}
		add(Check{Name: "private IPC, UTS and /proc", OK: err == nil, Detail: detail,
			Remedy: "srt will not run without them; in a container, allow mounting proc (e.g. --security-opt systempaths=unconfined) or set enableWeakerNestedSandbox in the settings"})
	}
	if b, err := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); err == nil {
		restricted := strings.TrimSpace(string(b)) == "1"
		add(Check{Name: "AppArmor user-namespace restriction", OK: !restricted, Detail: "apparmor_restrict_unprivileged_userns=" + strings.TrimSpace(string(b)),
			Remedy: "allow bwrap an AppArmor profile with 'userns' (Ubuntu 24.04: see /etc/apparmor.d/bwrap-userns-restrict), or sysctl kernel.apparmor_restrict_unprivileged_userns=0"})
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		add(Check{Name: "seccomp", OK: true, Detail: fmt.Sprintf("available (this process: mode %d)", v)})
	} else {
		add(Check{Name: "seccomp", Detail: err.Error(), Remedy: "use a kernel built with CONFIG_SECCOMP_FILTER"})
	}
	add(watchDoctor())
	if c, ok := bareRepositoryCheck(); ok {
		add(c)
	}
	add(landlockDoctor())
	add(limitsDoctor())
	add(staticCheck())
	if self, err := os.Executable(); err == nil {
		add(initCheck(self))
	}
	return checks
}

// whoChecks says which user srt runs as, and what root means for the
// sandbox.
func whoChecks() Check {
	uid := os.Geteuid()
	if uid != 0 {
		return Check{Name: "user", OK: true, Detail: fmt.Sprintf("uid %d", uid)}
	}
	return Check{Name: "user", OK: true, Detail: "root (uid 0)",
		Note: "the sandbox's uid 0 is the host's uid 0, without capabilities. srt keeps /proc/sys and the other kernel " +
			"interfaces read-only or hidden, refuses keyrings and gives the sandbox its own IPC, UTS, PID, network and " +
			"cgroup namespaces, and writes go only where allowWrite says; but every file the host's root owns is readable " +
			"(e.g. /etc/shadow, root's keys under /root) unless denyRead hides it. Run srt as an unprivileged user where you can."}
}

// versionAtLeast compares a dotted version with major.minor.
func versionAtLeast(v string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(v, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}

// bareRepositoryCheck says whether the user's git refuses a bare
// repository it was not pointed at (safe.bareRepository=explicit): a
// command that plants HEAD, objects and refs in a project makes git take
// the project for one, with the command's configuration. srt moves such a
// HEAD away after the run; git's setting refuses it whatever wrote it.
// ok is false when there is no git.
func bareRepositoryCheck() (Check, bool) {
	git, err := exec.LookPath("git")
	if err != nil {
		return Check{}, false
	}
	out, _ := exec.Command(git, "config", "--get", "safe.bareRepository").Output()
	v := strings.TrimSpace(string(out))
	c := Check{Name: "git refuses bare repositories it was not pointed at", OK: true, Detail: "safe.bareRepository=" + v}
	if v != "explicit" {
		if v == "" {
			c.Detail = "safe.bareRepository is not set (git's default: all)"
		}
		c.Note = "git config --global safe.bareRepository explicit: git then refuses a bare repository that a sandboxed command planted in a project (srt also moves such a HEAD to the quarantine after the run)"
	}
	return c, true
}

// staticCheck says whether srt was built without cgo: a binary linked
// with the C library starts more slowly (the dynamic loader, the C
// library's start-up, cgo's threads), and srt starts twice a run, on the
// host and as the sandbox's init step. Nothing else differs for srt: it
// resolves names with Go's resolver and reads users from /etc/passwd.
func staticCheck() Check {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Check{Name: "how srt is linked", OK: true, Detail: "no build information"}
	}
	return linkCheck(bi.Settings)
}

// linkCheck is staticCheck on a build's settings.
func linkCheck(settings []debug.BuildSetting) Check {
	c := Check{Name: "how srt is linked", OK: true, Detail: "statically, without cgo"}
	for _, s := range settings {
		if s.Key == "CGO_ENABLED" && s.Value == "1" {
			c.Detail = "with the C library (CGO_ENABLED=1)"
			c.Note = "CGO_ENABLED=0 go install ./cmd/srt ./cmd/srt-main: each run starts sooner (by about a tenth in docs/performance.md)"
		}
	}
	return c
}
