// Package buildversion says which build of srt or srtc is running: the
// version set at link time, or the module version, and the VCS revision
// the Go toolchain recorded in the binary.
package buildversion

import "runtime/debug"

// Line is what --version prints for program: its name, the version (set,
// when not "", with -ldflags "-X main.version=..."; else the module
// version from the build information) and the VCS revision when the build
// recorded one. A build with -buildvcs=false, or outside a repository,
// records none, and Line says so rather than print a bare "dev".
func Line(program, set string) string {
	return line(program, set, debug.ReadBuildInfo)
}

// Version is the version alone: set, or else the module version, or
// "(devel)".
func Version(set string) string {
	if set != "" {
		return set
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func line(program, set string, read func() (*debug.BuildInfo, bool)) string {
	v, rev, dirty := set, "", false
	if bi, ok := read(); ok {
		if v == "" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "(devel)"
	}
	out := program + " " + v
	switch {
	case rev != "" && dirty:
		out += " (revision " + rev + ", with uncommitted changes)"
	case rev != "":
		out += " (revision " + rev + ")"
	default:
		out += " (no VCS revision recorded in this build)"
	}
	return out
}
