package policydiff

import (
	"fmt"
	"testing"

	"srt.dev/internal/settingsgen"
	"srt.dev/review/query"
	"srt.dev/review/source"
	"srt.dev/schema"
)

// noCredentials is settingsgen.Scale(n) without credentials, whose
// validation cost is the grammar's, not the diff's.
func noCredentials(n int) settingsgen.Sizes {
	s := settingsgen.Scale(n)
	s.EnvVars, s.CredentialFiles, s.AwsPairs, s.InjectHosts = 0, 0, 0, 0
	return s
}

func loadGenerated(tb testing.TB, seed uint64, s settingsgen.Sizes) *query.Source {
	src, diags, err := source.Load(fmt.Sprintf("gen%d.json", seed), settingsgen.Generate(seed, s), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		tb.Fatal(err, diags)
	}
	return src
}

// BenchmarkDiffGrowth diffs two generated policies of growing size; the
// time per operation must grow about linearly with the size.
func BenchmarkDiffGrowth(b *testing.B) {
	for _, n := range []int{250, 1000, 4000} {
		b.Run(fmt.Sprintf("domains=%d", n), func(b *testing.B) {
			old, new := loadGenerated(b, 1, noCredentials(n)), loadGenerated(b, 2, noCredentials(n))
			b.ReportAllocs()
			for b.Loop() {
				Diff(old, new, query.Targets)
			}
		})
	}
}
