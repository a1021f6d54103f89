package artifact

import (
	"encoding/json"
	"fmt"
	"testing"

	"srt.dev/compiler"
	"srt.dev/schema"
)

// largestFile is a settings file just under the 4 MiB cap: 180,000
// allowed domains, as a generated allow list would have them.
func largestFile(b *testing.B) []byte {
	doms := make([]string, 180000)
	for i := range doms {
		doms[i] = fmt.Sprintf("h%d.example%d.com", i, i%97)
	}
	data, err := json.Marshal(map[string]any{
		"network":    map[string]any{"allowedDomains": doms, "deniedDomains": []string{}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{"."}, "denyWrite": []string{}},
	})
	if err != nil {
		b.Fatal(err)
	}
	if len(data) > schema.MaxFileSize {
		b.Fatalf("%d bytes, more than the cap", len(data))
	}
	return data
}

// BenchmarkLargestFile validates, compiles and builds the Linux artifacts
// of the largest settings file srt accepts (docs/performance-validation.md):
// validate is schema.Load, compile adds compiler.Compile, and linux adds
// the artifact directory (most of it plan.json, one rule with its origin
// per entry).
func BenchmarkLargestFile(b *testing.B) {
	data := largestFile(b)
	for _, stage := range []string{"validate", "compile", "linux"} {
		b.Run(stage, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				s, diags := schema.Load("large.json", data)
				if diags != nil {
					b.Fatal(diags)
				}
				if stage == "validate" {
					continue
				}
				p, _, err := compiler.Compile(s, schema.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if stage == "compile" {
					continue
				}
				if _, err := Build(p, []Target{Linux}, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
