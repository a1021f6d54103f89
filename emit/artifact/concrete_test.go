package artifact

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/internal/testenv"
	"srt.dev/schema"
)

func writeDir(t *testing.T, files Files) string {
	t.Helper()
	dir := t.TempDir()
	for n, b := range files {
		testenv.MkdirAll(t, filepath.Dir(filepath.Join(dir, n)), 0o755)
		testenv.WriteFile(t, filepath.Join(dir, n), b, 0o644)
	}
	return dir
}

func compileText(t *testing.T, settings string) *policy.Policy {
	t.Helper()
	p, diags, err := compiler.CompileFile("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	return p
}

// TestConcretePlan: plan.json records the checksum of the concrete file it
// lists and the host it was written for, so that the directory reads back.
func TestConcretePlan(t *testing.T) {
	p := compileText(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`)
	files, err := Build(p, []Target{Linux}, Options{Home: "/home/u", Cwd: "/home/u/my proj"})
	if err != nil {
		t.Fatal(err)
	}
	args := string(files["linux/bwrap.args"])
	if !strings.Contains(args, "@deny-read /home/u/.ssh") || !strings.Contains(args, `@allow-write "/home/u/my proj"`) || strings.Contains(args, "${HOME}") || strings.Contains(args, "${CWD}") {
		t.Errorf("concrete bwrap.args:\n%s", args)
	}
	m, got, err := readDir(writeDir(t, files))
	if err != nil {
		t.Fatal(err)
	}
	if m.Concrete == nil || *m.Concrete != (Options{Home: "/home/u", Cwd: "/home/u/my proj"}) {
		t.Errorf("manifest host = %+v", m.Concrete)
	}
	if string(got["linux/bwrap.args"]) != args {
		t.Error("bwrap.args read back differs")
	}
	// A symbolic plan records no host.
	files, _ = Build(p, []Target{Linux}, Options{})
	if m, _, err := readDir(writeDir(t, files)); err != nil || m.Concrete != nil {
		t.Errorf("symbolic plan: %v, host %+v", err, m.Concrete)
	}
	if _, err := Build(compileText(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/**/.env"], "allowWrite": [], "denyWrite": []}}`), []Target{Linux}, Options{Home: "/home/[u]"}); err == nil || !strings.Contains(err.Error(), "holds a glob character") {
		t.Errorf("glob characters in a concrete root under a pattern: %v", err)
	}
	if _, err := Build(p, []Target{Linux}, Options{Cwd: "proj"}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative --cwd: %v", err)
	}
}

// TestUnknownFormat: a plan of a format this srt does not read is refused
// with what to do.
func TestUnknownFormat(t *testing.T) {
	p := compileText(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	files, err := Build(p, []Target{Linux}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(files["plan.json"], &m)
	m["formatVersion"] = policy.FormatVersion + 1
	files["plan.json"], _ = json.Marshal(m)
	_, _, err = readDir(writeDir(t, files))
	want := fmt.Sprintf("plan format %d, and this srt reads format %d only: compile it again", policy.FormatVersion+1, policy.FormatVersion)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Read(format+1) = %v", err)
	}
}

// readDir reads the artifact directory d from the disk.
func readDir(d string) (*Manifest, Files, error) { return Read(os.DirFS(d), d) }
