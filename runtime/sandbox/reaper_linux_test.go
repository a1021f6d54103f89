//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"srt.dev/runtime/placeholders"
)

// TestReaperClean: the reaper starts srt to sweep when the pipe closes
// without a word (srt died, or left something behind), and not when srt
// says its run is clean. A script stands in for srt and leaves a mark.
func TestReaperClean(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "srt")
	if err := os.WriteFile(self, []byte("#!/bin/sh\necho \"$@\" > \"$0.ran\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	reg := &placeholders.Registry{Dir: filepath.Join(dir, "reg"), TmpDir: dir}
	ran := func(clean bool) bool {
		os.Remove(self + ".ran") // absent until a reaper ran
		stop, err := startReaper(self, reg, filepath.Join(dir, "run-1.json"))
		if err != nil {
			t.Fatal(err)
		}
		stop(clean)
		// The reaper ends by itself; the mark appears at once if it runs.
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(self + ".ran"); err == nil {
				return true
			}
			time.Sleep(20 * time.Millisecond)
			if clean && time.Until(deadline) < 4*time.Second {
				return false
			}
		}
		return false
	}
	if !ran(false) {
		t.Error("the reaper did not sweep after the pipe closed without a word")
	}
	if ran(true) {
		t.Error("the reaper swept after srt said its run was clean")
	}
}
