package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"srtc": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs the txtar scripts in testdata/script. SRT_UPDATE=1
// rewrites the expected output in them; CI never sets it.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("SRT_UPDATE") == "1",
		Setup: func(env *testscript.Env) error {
			// srt's state (the plans srtc compile trusts) in the script's
			// own directory.
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			// The realistic project settings and their tests, for the
			// review_ scripts: $WORK/agent-project.
			return copyDir(filepath.Join("testdata", "agent-project"), filepath.Join(env.WorkDir, "agent-project"))
		},
	})
}

// copyDir copies the regular files of src into a new directory dst.
func copyDir(src, dst string) error {
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
