package lint

import (
	"slices"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/internal/settingsgen"
	"srt.dev/schema"
)

// TestCoverIndex checks that coverIndex.candidates holds every rule that
// compiler.Covers says covers a path, for every list of generated
// policies and every path a rule names, below it and above it.
func TestCoverIndex(t *testing.T) {
	for seed := range uint64(3) {
		p, diags, err := compiler.CompileFile("gen.json", settingsgen.Generate(seed, settingsgen.Scale(300)), schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			t.Fatal(err, diags)
		}
		fs := &p.Filesystem
		lists := [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite}
		var paths []policy.Path
		for _, l := range lists {
			for _, r := range l {
				rp := r.Path.String()
				s := policy.GlobSample(rp)
				for _, q := range []string{rp, s, s + "/x", strings.ReplaceAll(s, "/x/", "/a/b/")} {
					paths = append(paths, policy.MustParsePath(q))
				}
				if dir, ok := r.Path.Parent(); ok {
					paths = append(paths, dir)
				}
			}
		}
		for _, l := range lists {
			x := indexCovers(l)
			for _, q := range paths {
				got := x.candidates(q)
				for i, r := range l {
					if r.Covers(q) && !slices.Contains(got, i) {
						t.Fatalf("seed %d: %q covers %q, but is not a candidate (%v)", seed, r.Path, q, got)
					}
				}
			}
		}
	}
}
