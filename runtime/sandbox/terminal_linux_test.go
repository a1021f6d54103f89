//go:build linux

package sandbox

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParseTTYArg(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0,1,2", []int{0, 1, 2}},
		{"1", []int{1}},
		{"", nil},
		{"3", nil},
		{"-1", nil},
		{"0,x", nil},
	}
	for _, tt := range tests {
		got, err := parseTTYArg(tt.in)
		if !slices.Equal(got, tt.want) || (err == nil) != (tt.want != nil) {
			t.Errorf("parseTTYArg(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

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
