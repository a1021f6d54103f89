package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
		t.Fatalf("found %d Windows golden cases, want at least 25 (spec macos-windows.md §4.2)", len(cases))
	}
	rewrite := *update || os.Getenv("SRT_UPDATE") == "1"
	for _, settings := range cases {
		dir := filepath.Dir(settings)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files := compileWindows(t, settings)
			have := existing(t, dir)
			if rewrite {
				for _, n := range have {
					os.Remove(filepath.Join(dir, filepath.FromSlash(n)))
				}
				for n, b := range files {
					path := filepath.Join(dir, filepath.FromSlash(n))
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				return
			}
			if diff := cmp.Diff(files.Names(), have); diff != "" {
				t.Errorf("artifact files (-compiled +golden):\n%s", diff)
			}
			for n, got := range files {
				want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
				if err != nil {
					continue // reported above
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs (-golden +compiled):\n%s", n, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
				}
			}
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
