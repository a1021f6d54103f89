// Package source loads a settings file for review: validated by the
// grammar and compiled (package compiler, which links CUE), for the review
// tools of package query and those built on it, which need only the
// policy.
package source

import (
	"srt.dev/compiler"
	"srt.dev/review/query"
	"srt.dev/schema"
)

// Load validates and compiles a settings file as compiler.CompileFile
// does, keeping the positions of its switches. It returns the file's
// diagnostics when it is invalid, and an error only for a bug.
func Load(name string, data []byte, opts schema.Options) (*query.Source, schema.Diagnostics, error) {
	p, diags, err := compiler.CompileFile(name, data, opts)
	if err != nil || diags != nil {
		return nil, diags, err
	}
	return &query.Source{Policy: p}, nil, nil
}
