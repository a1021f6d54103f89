package resolve

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/untrusted"
)

// TestScanTooManyEntries: a working directory with more entries within
// the scan's depth than it reads is refused with what to do: the
// directory that holds most of them (a sandboxed run may have named it:
// quoted), removing them, and the setting that narrows the scan.
func TestScanTooManyEntries(t *testing.T) {
	defer func(n int) { maxScanEntries = n }(maxScanEntries)
	maxScanEntries = 50
	root := t.TempDir()
	big := "gen\x1b[2K\r\nsrt: all clear"
	for dir, n := range map[string]int{big: 60, "src": 5} {
		if err := os.MkdirAll(filepath.Join(root, dir, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := os.WriteFile(filepath.Join(root, dir, "x", fmt.Sprint("f", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := &resolver{h: Host{Home: root, Cwd: root}, res: &Result{}}
	_, err := r.scan("depth=3")
	if err == nil {
		t.Fatal("scan of a tree past its limit: no error")
	}
	msg := err.Error()
	for _, want := range []string{
		"more than 50 entries within depth 3",
		"below " + untrusted.Quote(filepath.Join(root, big)),
		"remove them",
		"lower mandatoryDenySearchDepth in the settings (1-10, now 3)",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("scan error = %q, want it to say %q", msg, want)
		}
	}
	if strings.ContainsAny(msg, "\x1b\r\n") {
		t.Errorf("scan error = %q: the name shown raw", msg)
	}
}
