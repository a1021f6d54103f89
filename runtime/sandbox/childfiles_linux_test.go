//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChildFilesFailLeavesNothing: when this binary cannot be opened
// for the sandbox (it was replaced or removed while srt ran), childFiles
// fails with every descriptor it opened closed: a Manager runs many
// commands, and the garbage collector is no way to close them.
func TestChildFilesFailLeavesNothing(t *testing.T) {
	open := func() int {
		entries, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(entries)
	}
	before := open()
	set, _, err := childFiles([]byte("program"), filepath.Join(t.TempDir(), "gone"))
	if err == nil || set != nil {
		t.Fatalf("childFiles of a missing binary = %v, %v; want an error", set, err)
	}
	// The seccomp program's writer closes its end on its own goroutine.
	after := open()
	for deadline := time.Now().Add(2 * time.Second); after != before && time.Now().Before(deadline); after = open() {
		time.Sleep(10 * time.Millisecond)
	}
	if after != before {
		t.Errorf("childFiles failed and left %d descriptors open", after-before)
	}
}
