package buildversion

import (
	"runtime/debug"
	"testing"
)

func TestLine(t *testing.T) {
	info := func(v string, settings ...debug.BuildSetting) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Main: debug.Module{Version: v}, Settings: settings}, true
		}
	}
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "1bb27b5"}
	tests := []struct {
		name, set string
		read      func() (*debug.BuildInfo, bool)
		want      string
	}{
		{"module version and revision", "", info("v1.2.3", rev), "srt v1.2.3 (revision 1bb27b5)"},
		{"uncommitted", "", info("(devel)", rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "srt (devel) (revision 1bb27b5, with uncommitted changes)"},
		{"no VCS stamp (-buildvcs=false)", "", info("(devel)"), "srt (devel) (no VCS revision recorded in this build)"},
		{"no build information", "", func() (*debug.BuildInfo, bool) { return nil, false }, "srt (devel) (no VCS revision recorded in this build)"},
		{"set at link time", "v2.0.0", info("(devel)", rev), "srt v2.0.0 (revision 1bb27b5)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := line("srt", tt.set, tt.read); got != tt.want {
				t.Errorf("line = %q, want %q", got, tt.want)
			}
		})
	}
}
