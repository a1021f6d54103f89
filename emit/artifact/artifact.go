// Package artifact builds and reads the artifact directory of a compiled
// policy (docs/srtc.md#srtc-compile): plan.json, the manifest, and for
// each target the files its emitter produces. Like the emitters it is
// pure: Build returns bytes in memory, which the caller writes out; Read
// takes the directory as an fs.FS the caller opened.
package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/emit/seatbelt"
)

// Target is a platform the artifacts are for (policy.Target).
type Target = policy.Target

// The targets.
const (
	Linux   = policy.TargetLinux
	MacOS   = policy.TargetMacOS
	Windows = policy.TargetWindows
)

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
	// Concrete, when set, is the host linux/bwrap.args was written for;
	// srt runs such a plan only there.
	Concrete *Options `json:"concrete,omitempty"`
	// Digest is the plan's identity, set by Read: Digest of the plan.json
	// read, whose checksums every file read was checked against.
	Digest string `json:"-"`
}

// Options ask for the concrete form of linux/bwrap.args for one host: the
// symbolic ${HOME} and ${CWD} replaced by Home and Cwd where they are set.
// The zero value keeps the plan symbolic and portable.
type Options struct {
	Home string `json:"home,omitempty"`
	Cwd  string `json:"cwd,omitempty"`
}

func (o Options) concrete() bool { return o.Home != "" || o.Cwd != "" }

// Build returns the artifact directory of p for targets: symbolic, or with
// the concrete form of the Linux plan for one host when o asks for it
// (plan.json then records the host, and the checksum of what is written).
func Build(p *policy.Policy, targets []Target, o Options) (Files, error) {
	files := Files{}
	for _, t := range targets {
		switch t {
		case Linux:
			if err := linux(p, files, o); err != nil {
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
	return finish(p, targets, files, o)
}

// finish adds plan.json, the manifest of files, to files.
func finish(p *policy.Policy, targets []Target, files Files, o Options) (Files, error) {
	m := Manifest{Policy: *p, Targets: targets, Files: map[string]string{}}
	if o.concrete() && files["linux/bwrap.args"] != nil {
		m.Concrete = &o
	}
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

func linux(p *policy.Policy, files Files, o Options) error {
	if p.Windows != nil {
		return errWindowsReading(Linux)
	}
	pl := bwrap.Emit(p)
	if o.concrete() {
		if err := concreteOK(pl, o); err != nil {
			return err
		}
		pl = pl.Concrete(o.Home, o.Cwd)
	}
	files["linux/bwrap.args"] = pl.Render()
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

// concreteOK refuses a concrete plan the runtime would misread: a relative
// directory, or one holding glob characters under which a pattern stands
// (the pattern would match inside the directory's name).
func concreteOK(pl bwrap.Plan, o Options) error {
	for _, d := range []struct {
		flag, dir string
		root      policy.Root
	}{{"--home", o.Home, policy.Home}, {"--cwd", o.Cwd, policy.Cwd}} {
		if d.dir == "" {
			continue
		}
		if !strings.HasPrefix(d.dir, "/") {
			return fmt.Errorf("%s %s: the concrete plan needs an absolute path", d.flag, d.dir)
		}
		if !strings.ContainsAny(d.dir, "*?[]{}\\") {
			continue
		}
		for _, s := range pl.Steps {
			if p, err := policy.ParsePath(s.Operand); err == nil && s.Qualifier == bwrap.Pattern && p.Root() == d.root {
				return fmt.Errorf("%s %s holds a glob character, and the plan has a pattern under it (%s): write the symbolic plan instead (no %s)", d.flag, d.dir, s.Operand, d.flag)
			}
		}
	}
	return nil
}

// Digest is the identity of a plan: the SHA-256 (hex) of its plan.json,
// which holds the checksum of every other file.
func Digest(planJSON []byte) string {
	sum := sha256.Sum256(planJSON)
	return hex.EncodeToString(sum[:])
}
