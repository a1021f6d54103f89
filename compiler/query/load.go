package query

import (
	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// Source is a settings file compiled for review (the policy carries the
// positions of its switches).
type Source struct {
	Policy *policy.Policy
}

// Load validates and compiles a settings file as compiler.CompileFile
// does, keeping the positions of its switches. It returns the file's
// diagnostics when it is invalid, and an error only for a bug.
func Load(name string, data []byte, opts schema.Options) (*Source, schema.Diagnostics, error) {
	p, diags, err := compiler.CompileFile(name, data, opts)
	if err != nil || diags != nil {
		return nil, diags, err
	}
	return &Source{Policy: p}, nil, nil
}

// Evaluator returns an evaluator of the source with the given host facts.
func (s *Source) Evaluator(home, cwd string) *Evaluator {
	return New(s.Policy, Options{Home: home, Cwd: cwd})
}
