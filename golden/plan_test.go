package golden

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"srt.dev/compiler"
	"srt.dev/emit/bwrap"
	"srt.dev/schema"
)

// TestPlanReadsBack: for every case, linux/bwrap.args parses back into the
// steps the compiler emitted, so that srt run --plan (which reads the file)
// and srt -s (which compiles) resolve the same steps.
func TestPlanReadsBack(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases in testdata")
	}
	for _, settings := range cases {
		dir := filepath.Dir(settings)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data, err := os.ReadFile(settings)
			if err != nil {
				t.Fatal(err)
			}
			p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
			if err != nil || diags != nil {
				t.Fatalf("compile: %v %v", err, diags)
			}
			file, err := os.ReadFile(filepath.Join(dir, "linux", "bwrap.args"))
			if err != nil {
				t.Fatalf("the case has no Linux plan (go test ./golden/... -update writes it): %v", err)
			}
			read, err := bwrap.Parse(file)
			if err != nil {
				t.Fatal(err)
			}
			emitted := bwrap.Emit(p).Steps
			if diff := cmp.Diff(emitted, read.Steps, cmpopts.IgnoreFields(bwrap.Step{}, "Line", "Origin", "Params", "Reason", "Comment"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("bwrap.args read back (-emitted +read):\n%s", diff)
			}
		})
	}
}
