package seatbelt

import (
	"strings"
	"testing"

	"srt.dev/compiler/policy"
)

// EmitLinear is Emit in the emitter's linear mode: carve and late compare
// each deny with every entry (see otherIndex).
func EmitLinear(p *policy.Policy) ([]byte, error) {
	m := emitWith(p, true)
	if m.err != nil {
		return nil, m.err
	}
	return m.program().Render(), nil
}

// TestLiteralPieces pins the texts a pattern's matches must contain: the
// runs between separators and wildcards, without bracket sets (valid or
// not).
func TestLiteralPieces(t *testing.T) {
	for _, c := range []struct {
		e    entry
		want string
	}{
		{entry{root: "${HOME}", pat: "/.local/share/app1/keys/*.pem"}, ".local|share|app1|keys|.pem"},
		{entry{root: "${CWD}", pat: "/**/*.key5"}, ".key5"},
		{entry{root: "${CWD}", pat: "/src/[ab]*.go"}, "src|.go"},
		{entry{root: "${CWD}", pat: "/x/[WIP] y/z?"}, "x| y|z"},
		{entry{root: "${CWD}", pat: "/x/[unclosed/y"}, "x"},
		{entry{root: "${CWD}", lit: "/[WIP] x", pat: "/*.log"}, "/[WIP] x|.log"},
		{entry{root: "${HOME}", lit: "/a/b"}, "/a/b"},
	} {
		if got := strings.Join(literalPieces(c.e), "|"); got != c.want {
			t.Errorf("literalPieces(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}
