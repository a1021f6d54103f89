//go:build linux

package sandbox

// The second layer: Landlock (Documentation/userspace-api/landlock.rst in
// the kernel's source). bubblewrap's mount table decides what the command
// can write; the init step also restricts the command with Landlock to
// writes below the write roots, the run's TMPDIR and the plan's grants, so
// that a mistake in the mount table (a path bound writable that should
// not be, a mount the command can move) is not an escape on its own.
// Landlock grants by hierarchy and cannot carve a deny out of a grant:
// the write denies inside the write roots stay bubblewrap's alone.

import (
	"fmt"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/initstep"
	"srt.dev/runtime/resolve"
)

// landlockInitArgs are the init step's options for the resolved second
// layer l, and for each the line of linux/bwrap.args it came from (the
// @landlock line for the scopes and grants, its @landlock-write line for
// a write root); nil when l is nil or the kernel has no Landlock (why
// says so).
func landlockInitArgs(l *resolve.Landlock, abi int) (args []string, lines []int, why string) {
	if l == nil {
		return nil, nil, ""
	}
	if abi <= 0 {
		return nil, nil, "landlock: this kernel has no Landlock; the sandbox's writes rest on its mounts alone (srt doctor)"
	}
	args = append(args, initstep.LandlockArg+strings.Join(l.Scopes, ","))
	lines = append(lines, l.Line)
	for i, p := range l.Write {
		args = append(args, initstep.LandlockWriteArg+p)
		lines = append(lines, l.Lines[i])
	}
	return args, lines, ""
}

// landlockDoctor is srt doctor's line on the second layer.
func landlockDoctor() Check {
	abi := initstep.ABI()
	if abi <= 0 {
		return Check{Name: "Landlock (second layer)", OK: true, Detail: "this kernel has no Landlock (Linux 5.13 or later, built with CONFIG_SECURITY_LANDLOCK and \"landlock\" in the lsm= boot parameter)",
			Note: "srt runs without the second layer: the sandbox's writes rest on bubblewrap's mounts alone"}
	}
	var has []string
	if abi >= 2 {
		has = append(has, "refer")
	}
	if abi >= 3 {
		has = append(has, "truncate")
	}
	if abi >= 5 {
		has = append(has, "ioctl_dev")
	}
	if abi >= 6 {
		has = append(has, "scopes "+strings.Join(policy.LandlockScopes, ", "))
	}
	detail := fmt.Sprintf("ABI %d: the command's writes are also limited to its write roots, its TMPDIR and srt's grants", abi)
	if len(has) > 0 {
		detail += "; with " + strings.Join(has, ", ")
	}
	return Check{Name: "Landlock (second layer)", OK: true, Detail: detail, Note: landlockReportNote(abi)}
}
