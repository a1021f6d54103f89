// Package golden holds the golden-file tests: one directory per case with a
// settings.json and the expected artifacts for every target, rewritten only
// by "go test ./golden/... -update" (or SRT_UPDATE=1) and reviewed like code.
//
// The cases arrive with the compiler and the emitters; until then the
// schema's own conformance tests (schema/testdata) are the fixtures.
package golden
