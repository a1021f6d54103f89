// Package emit assembles the artifact directory of a compiled policy (design
// §2): plan.json, and for each target the files its emitter produces. Like
// the emitters it is pure: bytes in memory, written out by the caller.
package emit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/emit/seatbelt"
)

// Target is a platform the artifacts are for.
type Target string

// The targets.
const (
	Linux   Target = "linux"
	MacOS   Target = "macos"
	Windows Target = "windows"
)

// ErrNotBuilt reports a target whose emitter does not exist yet.
var ErrNotBuilt = errors.New("not built yet")

// Files is the content of an artifact directory: slash-separated paths
// relative to it, and their bytes.
type Files map[string][]byte

// Names returns the paths in order.
func (f Files) Names() []string {
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Manifest is plan.json: the policy, and a checksum of every other file.
type Manifest struct {
	policy.Policy
	Targets []Target          `json:"targets"`
	Files   map[string]string `json:"files"` // path -> SHA-256, hex
}

// Artifacts returns the artifact directory of p for targets.
func Artifacts(p *policy.Policy, targets []Target) (Files, error) {
	files := Files{}
	for _, t := range targets {
		switch t {
		case Linux:
			if err := linux(p, files); err != nil {
				return nil, err
			}
		case MacOS:
			sb, err := seatbelt.Emit(p)
			if err != nil {
				return nil, fmt.Errorf("target macos: %w", err)
			}
			files["macos/profile.sb"] = sb
		case Windows:
			if err := windows(p, files); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown target %q", t)
		}
	}
	return finish(p, targets, files)
}

// finish adds plan.json, the manifest of files, to files.
func finish(p *policy.Policy, targets []Target, files Files) (Files, error) {
	m := Manifest{Policy: *p, Targets: targets, Files: map[string]string{}}
	for name, b := range files {
		sum := sha256.Sum256(b)
		m.Files[name] = hex.EncodeToString(sum[:])
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	files["plan.json"] = append(b, '\n')
	return files, nil
}

func linux(p *policy.Policy, files Files) error {
	if p.Windows != nil {
		return errWindowsReading(Linux)
	}
	files["linux/bwrap.args"] = bwrap.Emit(p).Render()
	rules, err := seccomp.ParseRules(p.Process.Seccomp)
	if err != nil {
		return err
	}
	if rules == (seccomp.Rules{}) {
		return nil
	}
	for _, a := range seccomp.Arches {
		prog := seccomp.Build(a, rules)
		raw, err := prog.Marshal()
		if err != nil {
			return err
		}
		files["linux/seccomp."+string(a)+".bpf"] = raw
		files["linux/seccomp."+string(a)+".txt"] = []byte(prog.String())
	}
	return nil
}
