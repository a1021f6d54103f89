package artifact_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/artifact"
	"srt.dev/internal/testenv"
	"srt.dev/schema"
)

const portable = `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`

func compileFor(t *testing.T, os schema.OS) *policy.Policy {
	t.Helper()
	p, diags, err := compiler.CompileFile("s.json", []byte(portable), schema.Options{OS: os})
	if err != nil || diags != nil {
		t.Fatalf("compile: %v %v", err, diags)
	}
	return p
}

func write(t *testing.T, files artifact.Files) string {
	t.Helper()
	dir := t.TempDir()
	for n, b := range files {
		path := filepath.Join(dir, filepath.FromSlash(n))
		testenv.MkdirAll(t, filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestArtifactsSplit: one directory from the two readings; plan.json holds
// the POSIX policy and vouches for windows/plan.json, so srt run --plan
// still runs it on Linux.
func TestArtifactsSplit(t *testing.T) {
	files, err := artifact.BuildSplit(compileFor(t, schema.OSPosix), compileFor(t, schema.OSWindows), []artifact.Target{artifact.Linux}, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if files["linux/bwrap.args"] == nil || files["windows/plan.json"] == nil {
		t.Fatalf("files = %v, want both families", files.Names())
	}
	var m artifact.Manifest
	if err := json.Unmarshal(files["plan.json"], &m); err != nil {
		t.Fatal(err)
	}
	if m.Windows != nil || m.Files["windows/plan.json"] == "" || len(m.Targets) != 2 || m.Targets[1] != artifact.Windows {
		t.Errorf("manifest: Windows section %v, files %v, targets %v", m.Windows, m.Files, m.Targets)
	}
	if _, err := readDir(write(t, files)); err != nil {
		t.Errorf("Read = %v", err)
	}
}

// TestReadingsDoNotMix: a Windows reading never yields a Linux plan, and
// srt run --plan refuses a directory compiled for Windows only.
func TestReadingsDoNotMix(t *testing.T) {
	win := compileFor(t, schema.OSWindows)
	if _, err := artifact.Build(win, []artifact.Target{artifact.Linux}, artifact.Options{}); err == nil || !strings.Contains(err.Error(), "Windows path rules") {
		t.Errorf("Build(Windows reading, linux, artifact.Options{}) = %v, want a refusal", err)
	}
	if _, err := artifact.Build(compileFor(t, schema.OSPosix), []artifact.Target{artifact.Windows}, artifact.Options{}); err == nil || !strings.Contains(err.Error(), "POSIX path rules") {
		t.Errorf("Build(POSIX reading, windows, artifact.Options{}) = %v, want a refusal", err)
	}
	files, err := artifact.Build(win, []artifact.Target{artifact.Windows}, artifact.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readDir(write(t, files)); err == nil || !strings.Contains(err.Error(), "srt does not execute Windows plans yet") {
		t.Errorf("Read(windows only) = %v, want a refusal", err)
	}
}

// readDir reads the artifact directory d from the disk.
func readDir(d string) (*artifact.Manifest, error) {
	m, _, err := artifact.Read(os.DirFS(d), d)
	return m, err
}
