package query

import (
	"strings"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// SwitchKeys are the settings switches whose position an answer may name.
var SwitchKeys = []string{
	"filesystem.disabled", "filesystem.allowGitConfig", "mandatoryDenySearchDepth",
	"network.allowAllUnixSockets", "network.allowLocalBinding", "network.allowMachLookup",
	"network.strictAllowlist", "network.tlsTerminate", "credentials.allowPlaintextInject",
	"allowNestedUserNamespaces", "enableWeakerNestedSandbox", "enableWeakerNetworkIsolation",
	"allowAppleEvents", "allowPty",
	"network.httpProxyPort", "network.socksProxyPort",
}

// Switches returns the Origin of every switch of SwitchKeys that s sets.
func Switches(s *schema.Settings) map[string]policy.Origin {
	out := map[string]policy.Origin{}
	for _, k := range SwitchKeys {
		var p schema.Path
		for _, f := range strings.Split(k, ".") {
			p = append(p, f)
		}
		if pos := s.Pos(p); pos.Line > 0 {
			out[k] = policy.Origin{Key: k, Pos: pos.String()}
		}
	}
	return out
}

// Source is a settings file compiled for review: the policy and the
// positions of its switches.
type Source struct {
	Policy   *policy.Policy
	Switches map[string]policy.Origin
}

// Load validates and compiles a settings file as compiler.CompileFile
// does, keeping the positions of its switches. It returns the file's
// diagnostics when it is invalid, and an error only for a bug.
func Load(name string, data []byte, opts schema.Options) (*Source, schema.Diagnostics, error) {
	s, diags := opts.Load(name, data)
	if diags != nil {
		return nil, diags, nil
	}
	p, diags, err := compiler.CompileFor(s, opts.OS)
	if err != nil || diags != nil {
		return nil, diags, err
	}
	return &Source{Policy: p, Switches: Switches(s)}, nil, nil
}

// Evaluator returns an evaluator of the source with the given host facts.
func (s *Source) Evaluator(home, cwd string) *Evaluator {
	return New(s.Policy, Options{Home: home, Cwd: cwd, Switches: s.Switches})
}
