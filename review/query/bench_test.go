package query

import (
	"fmt"
	"testing"

	"srt.dev/compiler"
	"srt.dev/internal/settingsgen"
	"srt.dev/schema"
)

// pathHeavy are the sizes of a path-heavy settings file of 200 domains
// and 1,300 (k = 1) or 3,900 (k = 3) path rules, as docs/performance.md
// measures them: Scale(200) with these read and write denies, the file
//
//	gensettings -n 200 -set filesystem.denyRead=325 -set filesystem.denyWrite=925
//
// writes for k = 1.
func pathHeavy(k int) settingsgen.Sizes {
	s := settingsgen.Scale(200)
	s.DenyRead, s.DenyWrite = 325*k, 975*k-50
	return s
}

// BenchmarkExplainPathHeavy is srtc explain's summary of a path-heavy
// file on every target, from the compiled policy: the macOS answers
// compile the Seatbelt program and evaluate it for each path a rule
// names.
func BenchmarkExplainPathHeavy(b *testing.B) {
	for _, k := range []int{1, 3} {
		s := pathHeavy(k)
		b.Run(fmt.Sprintf("rules=%d", s.DenyRead+s.DenyWrite+s.AllowRead+s.AllowWrite), func(b *testing.B) {
			p, diags, err := compiler.CompileFile("heavy.json", settingsgen.Generate(1, s), schema.Options{OS: schema.OSPosix})
			if err != nil || diags != nil {
				b.Fatal(err, diags)
			}
			b.ReportAllocs()
			for b.Loop() {
				New(p, Options{}).Summary(Targets)
			}
		})
	}
}
