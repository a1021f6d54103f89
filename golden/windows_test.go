package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/emit"
	"srt.dev/schema"
)

// TestGoldenWindows compiles windows/<case>/settings.json with the Windows
// path rules and compares windows/plan.json, or error.txt for a file the
// compiler or the emitter refuses, with the files beside it. The same
// -update flag (or SRT_UPDATE=1) rewrites them.
func TestGoldenWindows(t *testing.T) {
	cases, err := filepath.Glob("windows/*/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 25 {
		t.Fatalf("found %d Windows golden cases, want at least 25 (docs/reference.md#windows-cases)", len(cases))
	}
	rewrite := *update || os.Getenv("SRT_UPDATE") == "1"
	for _, settings := range cases {
		dir := filepath.Dir(settings)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files := compileWindows(t, settings)
			check(t, dir, files, rewrite)
		})
	}
}

// compileWindows returns what the Windows golden files of a case hold:
// windows/plan.json, or error.txt with the diagnostics or the error.
func compileWindows(t *testing.T, settings string) emit.Files {
	t.Helper()
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSWindows})
	if err != nil {
		t.Fatal(err)
	}
	if diags != nil {
		var b strings.Builder
		for _, d := range diags {
			b.WriteString(d.String() + "\n")
		}
		return emit.Files{"error.txt": []byte(b.String())}
	}
	files, err := emit.Artifacts(p, []emit.Target{emit.Windows})
	if err != nil {
		return emit.Files{"error.txt": []byte(err.Error() + "\n")}
	}
	return emit.Files{"windows/plan.json": files["windows/plan.json"]}
}
