package schema

import (
	"encoding/json"
	"fmt"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/format"
	"cuelang.org/go/encoding/jsonschema"
)

// JSONSchemaID is the "$id" of the exported JSON Schema.
const JSONSchemaID = "https://srt.dev/schema/srt-settings.json"

// JSONSchema returns #Settings exported as JSON Schema (draft 2020-12), for
// editors: reference it as "$schema" in a settings file. It is generated
// from the CUE grammar, never written by hand.
//
// JSON Schema cannot express the rules of #Checks (the cross-field rules of
// docs/reference.md#cross-field-rules and the rules that need a parser), nor decide integers by
// value the way the reference does (3.0 is an integer there, and here); an
// editor therefore accepts a little more than srtc validate.
func JSONSchema(os OS) ([]byte, error) {
	g := grammarFor(os)
	g.mu.Lock()
	defer g.mu.Unlock()
	expr, err := jsonschema.Generate(g.settings, &jsonschema.GenerateConfig{})
	if err != nil {
		return nil, fmt.Errorf("exporting JSON Schema: %w", err)
	}
	v := g.ctx.BuildExpr(expr)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("exporting JSON Schema: %w", err)
	}
	v = v.FillPath(cue.ParsePath(`"$id"`), JSONSchemaID)
	v = v.FillPath(cue.ParsePath(`"title"`), "srt sandbox settings (.srt-settings.json)")
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("exporting JSON Schema: %w", err)
	}
	return append(b, '\n'), nil
}

// CUE returns the grammar's CUE source, formatted.
func CUE() ([]byte, error) {
	return format.Source([]byte(Source))
}
