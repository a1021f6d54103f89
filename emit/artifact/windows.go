package artifact

import (
	"fmt"

	"srt.dev/compiler/policy"
	"srt.dev/emit/wfp"
)

// windows adds windows/plan.json, which needs the Windows reading of the
// settings (p.Windows set).
func windows(p *policy.Policy, files Files) error {
	b, err := wfp.Bytes(p)
	if err != nil {
		return fmt.Errorf("target windows: %w", err)
	}
	files["windows/plan.json"] = b
	return nil
}

// errWindowsReading refuses a POSIX target for a policy whose paths were
// read the Windows way: C:/x would become a path nobody meant.
func errWindowsReading(t Target) error {
	return fmt.Errorf("target %s: the policy was compiled with the Windows path rules; compile the settings with the POSIX rules for this target", t)
}

// BuildSplit is Build for targets that read the settings file
// differently: the POSIX targets (linux, macos) from posix, and windows
// from win, the Windows reading of the same file. plan.json holds the
// POSIX policy and the checksum of every file, windows/plan.json
// included; windows/plan.json carries its own provenance. A nil win leaves
// the windows target out.
func BuildSplit(posix, win *policy.Policy, posixTargets []Target, o Options) (Files, error) {
	if win == nil {
		return Build(posix, posixTargets, o)
	}
	files, err := Build(posix, posixTargets, o)
	if err != nil {
		return nil, err
	}
	delete(files, "plan.json")
	if err := windows(win, files); err != nil {
		return nil, err
	}
	return finish(posix, append(append([]Target{}, posixTargets...), Windows), files, o)
}
