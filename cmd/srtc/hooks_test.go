package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// TestPreCommitHooks runs every hook's entry of .pre-commit-hooks.yaml as
// pre-commit would, in a copy of the realistic project: the files it
// matches as arguments unless pass_filenames is false. Each must succeed
// there, and the validate and lint hooks must fail on a bad file.
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", ".pre-commit-hooks.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	type hook struct {
		id, entry string
		files     bool
	}
	var hooks []hook
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "- id: "):
			hooks = append(hooks, hook{id: strings.TrimPrefix(line, "- id: "), files: true})
		case strings.HasPrefix(line, "entry: "):
			hooks[len(hooks)-1].entry = strings.TrimPrefix(line, "entry: ")
		case line == "pass_filenames: false":
			hooks[len(hooks)-1].files = false
		}
	}
	if len(hooks) != 4 {
		t.Fatalf("%d hooks, want validate, lint, test and compile --check", len(hooks))
	}
	dir := t.TempDir()
	if err := copyDir(filepath.Join("testdata", "agent-project"), dir); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	if code, _, errs := srtc("compile", "-o", "srt-plan", ".srt-settings.json"); code != 0 {
		t.Fatalf("compile: %d %s", code, errs)
	}
	for _, h := range hooks {
		args := strings.Fields(h.entry)
		if args[0] != "srtc" {
			t.Errorf("%s: entry %q does not run srtc", h.id, h.entry)
			continue
		}
		args = args[1:]
		if h.files {
			args = append(args, ".srt-settings.json")
		}
		if code, out, errs := srtc(args...); code != 0 {
			t.Errorf("%s: %v: status %d\n%s%s", h.id, args, code, out, errs)
		}
		if h.id == "srtc-lint" || h.id == "srtc-validate" {
			bad := append(args[:len(args)-1:len(args)-1], "risky.json")
			content := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["/"], "denyWrite": []}}` // valid, SRT102
			if h.id == "srtc-validate" {
				content = `{}`
			}
			testenv.WriteFile(t, "risky.json", []byte(content), 0o644)
			if code, _, _ := srtc(bad...); code != 1 {
				t.Errorf("%s on a bad file: status %d, want 1", h.id, code)
			}
		}
	}
	// A stale plan fails the compile --check hook.
	testenv.WriteFile(t, filepath.Join("srt-plan", "plan.json"), []byte("{}"), 0o644)
	if code, _, _ := srtc(strings.Fields(hooks[3].entry)[1:]...); code != 1 {
		t.Errorf("compile --check on a stale plan: status %d, want 1", code)
	}
}
