//go:build darwin

package sandbox

// The macOS runtime besides the run (run_darwin.go): srt's own files as
// Seatbelt matches them, the Linux roles refused, doctor.

import (
	"errors"
	"os"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/realpath"
	"srt.dev/runtime/trust"
)

// defaults fills in what Options leave to this process (hostDefaults).
func (o *Options) defaults() error { return o.hostDefaults() }

// darwinState is the caller's state with the quarantine, every path as
// Seatbelt matches it: links resolved (the part that does not exist yet
// kept as written).
func darwinState(in map[policy.StateKind][]string) map[policy.StateKind][]string {
	out := map[policy.StateKind][]string{}
	for k, v := range in {
		out[k] = append(out[k], v...)
	}
	if q, err := quarantine.DefaultDir(); err == nil {
		out[policy.StateQuarantine] = append(out[policy.StateQuarantine], q)
	}
	if d, err := trust.Dir(); err == nil {
		out[policy.StateTrust] = append(out[policy.StateTrust], d)
	}
	for k, v := range out {
		for i, p := range v {
			v[i] = realpath.Of(p)
		}
		out[k] = v
	}
	return out
}

// errLinuxOnly: the helper roles below belong to the Linux runtime.
var errLinuxOnly = errors.New("not used on macOS: srt runs sandbox-exec directly, with no init step and no placeholders")

// Reap is the Linux runtime's reaper; macOS makes no placeholders.
func Reap([]string) error { return errLinuxOnly }

// Doctor reports whether sandbox-exec is there. The bwrap argument is
// ignored on macOS.
func Doctor(string) []Check {
	c := Check{Name: "sandbox-exec", Remedy: SandboxExec + " ships with macOS; without it srt cannot sandbox anything here"}
	fi, err := os.Stat(SandboxExec)
	switch {
	case err != nil:
		c.Detail = err.Error()
	case fi.Mode()&0o111 == 0:
		c.Detail = SandboxExec + " is not executable"
	default:
		c.OK, c.Detail = true, SandboxExec+" found (srt's macOS runtime has not been run on a real Mac yet)"
	}
	return []Check{c}
}
