package sandbox

import (
	"runtime/debug"
	"testing"
)

func TestLinkCheck(t *testing.T) {
	for _, c := range []struct {
		settings []debug.BuildSetting
		detail   string
		note     bool
	}{
		{[]debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}, {Key: "GOOS", Value: "linux"}}, "with the C library (CGO_ENABLED=1)", true},
		{[]debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}}, "statically, without cgo", false},
		{nil, "statically, without cgo", false}, // no cgo setting: a build without cgo
	} {
		got := linkCheck(c.settings)
		if !got.OK || got.Detail != c.detail || (got.Note != "") != c.note {
			t.Errorf("linkCheck(%v) = %+v, want detail %q, a note: %v", c.settings, got, c.detail, c.note)
		}
	}
}
