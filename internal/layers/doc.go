// Package layers holds no code: its test checks the house's import rules.
// The pure packages (schema/, compiler/, emit/ and what they import of this
// module) neither import runtime/ nor touch the host; every package of the
// module has a layer and imports only from its own layer or below; srt
// links neither CUE nor the compiler; srt-init stays lean. The rules, and
// each exception with its reason, are in layers_test.go.
package layers
