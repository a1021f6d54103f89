package sandbox

import (
	"slices"
	"testing"
)

func TestPathShadows(t *testing.T) {
	t.Setenv("PATH", "/home/u/.local/bin:relative::/usr/local/bin:/usr/bin:/bin")
	for _, tc := range []struct {
		found string
		want  []string
	}{
		{"/usr/bin/bwrap", []string{"/home/u/.local/bin/bwrap", "/usr/local/bin/bwrap"}},
		{"/home/u/.local/bin/bwrap", nil},
		{"/opt/bwrap/bwrap", nil}, // not from PATH
		{"/bin/bwrap", []string{"/home/u/.local/bin/bwrap", "/usr/local/bin/bwrap", "/usr/bin/bwrap"}},
	} {
		if got := PathShadows("bwrap", tc.found); !slices.Equal(got, tc.want) {
			t.Errorf("PathShadows(bwrap, %s) = %q, want %q", tc.found, got, tc.want)
		}
	}
}
