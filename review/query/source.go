package query

import (
	"srt.dev/compiler/policy"
)

// Source is a settings file compiled for review (the policy carries the
// positions of its switches; package review/source loads one).
type Source struct {
	Policy *policy.Policy
}

// Evaluator returns an evaluator of the source with the given host facts.
func (s *Source) Evaluator(home, cwd string) *Evaluator {
	return New(s.Policy, Options{Home: home, Cwd: cwd})
}
