//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// Doctor probes what this host allows: bubblewrap and its version, user
// and network namespaces, seccomp, Landlock, and the AppArmor restriction
// of unprivileged user namespaces. bwrap "" means bwrap on PATH.
func Doctor(bwrap string) []Check {
	var checks []Check
	add := func(c Check) { checks = append(checks, c) }

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
	// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION)
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, 1)
	if errno == 0 {
		add(Check{Name: "Landlock", OK: true, Detail: fmt.Sprintf("ABI %d (not used yet; defence in depth to come)", abi)})
	} else {
		add(Check{Name: "Landlock", OK: true, Detail: "not available (" + errno.Error() + "); srt does not need it"})
	}
	return checks
}

// versionAtLeast compares a dotted version with major.minor.
func versionAtLeast(v string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(v, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}
