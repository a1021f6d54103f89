package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"srt.dev/internal/testenv"
)

// goldenCases are the settings files of the golden corpus.
func goldenCases(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "golden", "testdata", "*", "settings.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	return files
}

// srtc runs srtc in-process and returns its status and output.
func srtc(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestReviewGoldenCorpus runs explain (summary and JSON) and lint over
// every case of the golden corpus: none may fail, and each summary must
// have a line for every target.
func TestReviewGoldenCorpus(t *testing.T) {
	for _, f := range goldenCases(t) {
		name := filepath.Base(filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			code, out, errs := srtc("explain", "--os", "posix", f)
			if code != 0 || errs != "" {
				t.Fatalf("explain: status %d\n%s", code, errs)
			}
			for _, target := range []string{"LINUX", "MACOS", "WINDOWS"} {
				if !strings.Contains(out, "\n"+target+"\n") {
					t.Errorf("explain has no %s section", target)
				}
			}
			code, out, errs = srtc("explain", "--os", "posix", "--format", "json", f)
			if code != 0 || !json.Valid([]byte(out)) {
				t.Fatalf("explain --format json: status %d, valid JSON %v\n%s", code, json.Valid([]byte(out)), errs)
			}
			code, _, errs = srtc("lint", "--os", "posix", f)
			if code > 1 || errs != "" {
				t.Fatalf("lint: status %d\n%s", code, errs)
			}
			code, _, errs = srtc("diff", "--os", "posix", f, f)
			if code != 0 {
				t.Fatalf("diff of a file with itself: status %d\n%s", code, errs)
			}
		})
	}
}

// TestLintSARIFSchema validates srtc lint --format sarif against the SARIF
// 2.1.0 JSON Schema (testdata/sarif, see SOURCE.md there), for a file
// with findings of every severity and for the whole golden corpus.
func TestLintSARIFSchema(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "sarif", "sarif-2.1.0-rtm.5.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	const id = "https://raw.githubusercontent.com/schemastore/schemastore/master/src/schemas/json/sarif-2.1.0-rtm.5.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(id, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	risky := filepath.Join(dir, "risky.json")
	testenv.WriteFile(t, risky, []byte(`{"network": {"allowedDomains": ["*.github.io", "a.com", "a.com"], "deniedDomains": ["127.1"]},
		"filesystem": {"denyRead": ["**/.env"], "allowRead": ["/etc"], "allowWrite": ["/"], "denyWrite": []}}`), 0o644)
	args := append([]string{"lint", "--os", "posix", "--format", "sarif", risky}, goldenCases(t)...)
	code, out, errs := srtc(args...)
	if code != 1 {
		t.Fatalf("lint: status %d, want 1 (risky.json has errors)\n%s", code, errs)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("the SARIF log does not validate: %v\n%s", err, out)
	}
	levels := map[string]bool{}
	var log struct {
		Runs []struct {
			Results []struct{ Level string }
		}
	}
	json.Unmarshal([]byte(out), &log)
	for _, r := range log.Runs[0].Results {
		levels[r.Level] = true
	}
	if !levels["error"] || !levels["warning"] || !levels["note"] {
		t.Errorf("levels %v: the test needs every level", levels)
	}
	// The schema must be able to fail: a level SARIF does not have.
	bad := strings.Replace(out, `"level": "note"`, `"level": "info"`, 1)
	inst, _ = jsonschema.UnmarshalJSON(strings.NewReader(bad))
	if sch.Validate(inst) == nil {
		t.Error("a SARIF log with level \"info\" validates: the schema check proves nothing")
	}
}

// TestDocsCISnippet runs the srtc commands of docs/review.md's CI snippet
// as written, in a copy of a project (cmd/srtc/testdata/agent-project,
// with its artifacts compiled) whose user has no settings of their own:
// each must succeed there.
func TestDocsCISnippet(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "review.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, ci, ok := strings.Cut(string(doc), "\n## CI\n")
	if !ok {
		t.Fatal("docs/review.md has no CI section")
	}
	var cmds [][]string
	for _, line := range strings.Split(ci, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- run: srtc "); ok {
			cmds = append(cmds, strings.Fields(rest))
		}
	}
	if len(cmds) < 3 {
		t.Fatalf("%d srtc commands in the CI snippet: %q", len(cmds), cmds)
	}
	proj := t.TempDir()
	if err := copyDir(filepath.Join("testdata", "agent-project"), proj); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	t.Chdir(proj)
	if code, _, errs := srtc("compile", "-o", "srt-plan", ".srt-settings.json"); code != 0 {
		t.Fatalf("compile: %d %s", code, errs)
	}
	for _, c := range cmds {
		if code, out, errs := srtc(c...); code != 0 {
			t.Errorf("srtc %s: exit %d\n%s%s", strings.Join(c, " "), code, out, errs)
		}
	}
}
