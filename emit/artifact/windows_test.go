package emit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit"
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

func write(t *testing.T, files emit.Files) string {
	t.Helper()
	dir := t.TempDir()
	for n, b := range files {
		path := filepath.Join(dir, filepath.FromSlash(n))
		os.MkdirAll(filepath.Dir(path), 0o755)
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
	files, err := emit.ArtifactsSplit(compileFor(t, schema.OSPosix), compileFor(t, schema.OSWindows), []emit.Target{emit.Linux})
	if err != nil {
		t.Fatal(err)
	}
	if files["linux/bwrap.args"] == nil || files["windows/plan.json"] == nil {
		t.Fatalf("files = %v, want both families", files.Names())
	}
	var m emit.Manifest
	if err := json.Unmarshal(files["plan.json"], &m); err != nil {
		t.Fatal(err)
	}
	if m.Windows != nil || m.Files["windows/plan.json"] == "" || len(m.Targets) != 2 || m.Targets[1] != emit.Windows {
		t.Errorf("manifest: Windows section %v, files %v, targets %v", m.Windows, m.Files, m.Targets)
	}
	if _, err := emit.ReadPlan(write(t, files)); err != nil {
		t.Errorf("ReadPlan = %v", err)
	}
}

// TestReadingsDoNotMix: a Windows reading never yields a Linux plan, and
// srt run --plan refuses a directory compiled for Windows only.
func TestReadingsDoNotMix(t *testing.T) {
	win := compileFor(t, schema.OSWindows)
	if _, err := emit.Artifacts(win, []emit.Target{emit.Linux}); err == nil || !strings.Contains(err.Error(), "Windows path rules") {
		t.Errorf("Artifacts(Windows reading, linux) = %v, want a refusal", err)
	}
	if _, err := emit.Artifacts(compileFor(t, schema.OSPosix), []emit.Target{emit.Windows}); err == nil || !strings.Contains(err.Error(), "POSIX path rules") {
		t.Errorf("Artifacts(POSIX reading, windows) = %v, want a refusal", err)
	}
	files, err := emit.Artifacts(win, []emit.Target{emit.Windows})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emit.ReadPlan(write(t, files)); err == nil || !strings.Contains(err.Error(), "srt does not execute Windows plans yet") {
		t.Errorf("ReadPlan(windows only) = %v, want a refusal", err)
	}
}
