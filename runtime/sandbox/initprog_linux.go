//go:build linux

package sandbox

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"

	"srt.dev/runtime/initstep"
)

// initProgram is the program bubblewrap starts as the sandbox's init
// step: srt-init beside srt (self) when it is of srt's build, else srt
// itself, which has the same role built in (runtime/initstep) and starts
// in about twice the time; why says why srt-init is not used.
func initProgram(self string) (prog, why string) {
	p := filepath.Join(filepath.Dir(self), initstep.Binary)
	if fi, err := os.Stat(p); err != nil {
		return self, err.Error()
	} else if !fi.Mode().IsRegular() {
		return self, p + " is not a regular file"
	}
	theirs, err := buildinfo.ReadFile(p)
	if err != nil {
		return self, fmt.Sprintf("%s: %v", p, err)
	}
	mine, ok := debug.ReadBuildInfo()
	if !ok {
		return self, "srt has no build information to compare " + p + " with"
	}
	if why := sameBuild(mine, theirs); why != "" {
		return self, fmt.Sprintf("%s is not of srt's build: %s", p, why)
	}
	return p, ""
}

// sameBuild says how two programs' builds differ, as the Go toolchain
// recorded them, or "" when they do not: the same Go, the same main
// module (version and checksum), the same build settings (flags, target,
// VCS revision and state), and every module other links at the version
// and checksum this one does.
func sameBuild(this, other *debug.BuildInfo) string {
	switch {
	case this.GoVersion != other.GoVersion:
		return fmt.Sprintf("built with %s, srt with %s", other.GoVersion, this.GoVersion)
	case this.Main.Path != other.Main.Path || this.Main.Version != other.Main.Version || this.Main.Sum != other.Main.Sum:
		return fmt.Sprintf("module %s %s, srt's %s %s", other.Main.Path, other.Main.Version, this.Main.Path, this.Main.Version)
	}
	settings := func(bi *debug.BuildInfo) []string {
		var s []string
		for _, kv := range bi.Settings {
			s = append(s, kv.Key+"="+kv.Value)
		}
		slices.Sort(s)
		return s
	}
	if a, b := settings(this), settings(other); !slices.Equal(a, b) {
		return fmt.Sprintf("build settings %q, srt's %q", b, a)
	}
	mod := func(m *debug.Module) string {
		s := m.Path + "@" + m.Version + " " + m.Sum
		if m.Replace != nil {
			s += " => " + m.Replace.Path + "@" + m.Replace.Version + " " + m.Replace.Sum
		}
		return s
	}
	deps := map[string]string{}
	for _, d := range this.Deps {
		deps[d.Path] = mod(d)
	}
	for _, d := range other.Deps {
		if deps[d.Path] != mod(d) {
			return fmt.Sprintf("it links %s, srt %q", mod(d), deps[d.Path])
		}
	}
	return ""
}

// initCheck is srt doctor's line on the init step's program.
func initCheck(self string) Check {
	c := Check{Name: "the sandbox's init step", OK: true}
	prog, why := initProgram(self)
	if prog != self {
		c.Detail = prog + ", of srt's build"
		return c
	}
	c.Detail = "srt itself (" + why + ")"
	c.Note = "CGO_ENABLED=0 go install ./cmd/srt-init (beside srt, from the same source): each run starts sooner (docs/performance.md)"
	return c
}
