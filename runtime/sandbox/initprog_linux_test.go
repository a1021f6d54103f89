//go:build linux

package sandbox

import (
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"

	"srt.dev/internal/testenv"
)

// TestSameBuild: srt-init is of srt's build only when the Go version, the
// main module, every build setting and every module it links are srt's.
func TestSameBuild(t *testing.T) {
	srt := func() *debug.BuildInfo {
		return &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Path:      "srt.dev/cmd/srt-main",
			Main:      debug.Module{Path: "srt.dev", Version: "(devel)"},
			Deps: []*debug.Module{
				{Path: "golang.org/x/sys", Version: "v0.50.0", Sum: "h1:a"},
				{Path: "github.com/dlclark/regexp2/v2", Version: "v2.0.0", Sum: "h1:b"},
			},
			Settings: []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}, {Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}},
		}
	}
	init := func() *debug.BuildInfo {
		bi := srt()
		bi.Path = "srt.dev/cmd/srt-init"
		bi.Deps = bi.Deps[:1] // links fewer modules
		// the same settings, in another order
		bi.Settings = []debug.BuildSetting{bi.Settings[2], bi.Settings[0], bi.Settings[1]}
		return bi
	}
	if why := sameBuild(srt(), init()); why != "" {
		t.Errorf("the same build: %s", why)
	}
	for _, tc := range []struct {
		name   string
		change func(*debug.BuildInfo)
		want   string
	}{
		{"another Go", func(bi *debug.BuildInfo) { bi.GoVersion = "go1.26.7" }, "go1.26.7"},
		{"another version", func(bi *debug.BuildInfo) { bi.Main.Version = "v1.0.0" }, "v1.0.0"},
		{"another revision", func(bi *debug.BuildInfo) { bi.Settings[2].Value = "def" }, "vcs.revision=def"},
		{"with cgo", func(bi *debug.BuildInfo) { bi.Settings[1].Value = "1" }, "CGO_ENABLED=1"},
		{"more settings", func(bi *debug.BuildInfo) {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: "-ldflags", Value: "-X main.version=1"})
		}, "-ldflags"},
		{"another dependency", func(bi *debug.BuildInfo) {
			bi.Deps[0] = &debug.Module{Path: "golang.org/x/sys", Version: "v0.49.0", Sum: "h1:c"}
		}, "v0.49.0"},
		{"a module srt does not link", func(bi *debug.BuildInfo) {
			bi.Deps = append(bi.Deps, &debug.Module{Path: "example.com/evil", Version: "v1"})
		}, "example.com/evil"},
		{"a replaced module", func(bi *debug.BuildInfo) {
			bi.Deps[0] = &debug.Module{Path: "golang.org/x/sys", Version: "v0.50.0", Sum: "h1:a", Replace: &debug.Module{Path: "../sys"}}
		}, "../sys"},
	} {
		other := init()
		tc.change(other)
		if why := sameBuild(srt(), other); !strings.Contains(why, tc.want) {
			t.Errorf("%s: sameBuild = %q, want it to name %q", tc.name, why, tc.want)
		}
	}
}

// TestInitProgramFallback: without an srt-init of its build beside it,
// srt is its own init step, and says why.
func TestInitProgramFallback(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "srt")
	if prog, why := initProgram(self); prog != self || !strings.Contains(why, "srt-init") {
		t.Errorf("no srt-init: %q, %q", prog, why)
	}
	testenv.WriteFile(t, filepath.Join(dir, "srt-init"), []byte("#!/bin/sh\n"), 0o755)
	if prog, why := initProgram(self); prog != self || why == "" {
		t.Errorf("a script: %q, %q", prog, why)
	}
	// A FIFO would block a reader: it is not opened.
	testenv.Remove(t, filepath.Join(dir, "srt-init"))
	if err := syscall.Mkfifo(filepath.Join(dir, "srt-init"), 0o644); err != nil {
		t.Fatal(err)
	}
	if prog, why := initProgram(self); prog != self || !strings.Contains(why, "not a regular file") {
		t.Errorf("a FIFO: %q, %q", prog, why)
	}
}
