package golden

import (
	"bytes"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler"
	"srt.dev/emit/artifact"
	"srt.dev/schema"
)

var update = flag.Bool("update", false, "rewrite the expected artifacts from the current compiler")

// TestGolden compiles testdata/<case>/settings.json and compares every
// artifact with the files beside it. "go test ./golden/... -update" (or
// SRT_UPDATE=1) rewrites them; review the diff like code.
func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("found %d golden cases, want at least 30", len(cases))
	}
	rewrite := *update || os.Getenv("SRT_UPDATE") == "1"
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
			files, err := artifact.Build(p, []artifact.Target{artifact.Linux, artifact.MacOS}, artifact.Options{})
			if err != nil {
				t.Fatal(err)
			}
			check(t, dir, files, rewrite)
		})
	}
}

// check compares a case directory's artifact files with files, or
// rewrites them.
func check(t *testing.T, dir string, files artifact.Files, rewrite bool) {
	t.Helper()
	have := existing(t, dir)
	if rewrite {
		for _, n := range have {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(n))); err != nil {
				t.Fatal(err)
			}
		}
		for _, n := range files.Names() {
			path := filepath.Join(dir, filepath.FromSlash(n))
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, files[n], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	for _, n := range have {
		if _, ok := files[n]; !ok {
			t.Errorf("%s: the compiler no longer writes %s (go test ./golden/... -update removes it)", dir, n)
		}
	}
	for _, n := range files.Names() {
		want, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			t.Errorf("%s: no expected %s (go test ./golden/... -update writes it): %v", dir, n, err)
			continue
		}
		if got := files[n]; !bytes.Equal(got, want) {
			if strings.HasSuffix(n, ".bpf") {
				got, want = []byte(hex.Dump(got)), []byte(hex.Dump(want))
			}
			t.Errorf("%s differs (-golden +compiled):\n%s", n, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(got), "\n")))
		}
	}
}

// existing lists the artifact files of a case directory.
func existing(t *testing.T, dir string) []string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if rel != "settings.json" {
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	return names
}
