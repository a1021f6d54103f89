//go:build linux

package sandbox

import (
	"os"
	"strings"
	"testing"
)

// TestNoTerminal: pipes, files and readers are not terminals; a run with
// them gets no terminal and its streams unchanged.
func TestNoTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if tty := newHostTerminal(r, w, f); tty != nil {
		t.Errorf("pipe and file: a terminal for %v", tty.fds)
	}
	if tty := newHostTerminal(strings.NewReader(""), nil, nil); tty != nil {
		t.Errorf("reader: a terminal for %v", tty.fds)
	}
}
