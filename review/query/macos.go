package query

import (
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
)

// macPath is p as Seatbelt sees it: the fixed symlinks into /private
// resolved.
func macPath(p string) string { return policy.MacKernelPath(p) }

// expandRaw is symbolic path p (a probe of the program, seatbelt.Probes)
// with the roots the options name filled in, and nothing folded.
func (e *Evaluator) expandRaw(p string) string {
	x, ok := asPath(p)
	if !ok || x.Root() != policy.Home && x.Root() != policy.Cwd {
		return p
	}
	if s, ok := x.Expand(e.opts.Home, e.opts.Cwd); ok {
		return s
	}
	return p
}

// macOS is the Seatbelt program (emit/seatbelt): its answers are the
// program's verdicts (macfiles.go, macprog.go).
type macOS struct{ *Evaluator }

func (m macOS) target() Target { return MacOS }

// keys: the macOS answers read the program, so no rule list is indexed
// for them; every rule is a candidate.
func (m macOS) keys(r policy.PathRule, allow bool) ([]keyed, bool) { return nil, false }

func (m macOS) forms(p string) []string { return []string{macPath(p)} }

func (m macOS) credentialRead(c policy.PathRule) Decision {
	return Decision{Rule: c.Origin, Why: "credential mask: " + string(MacOS) + " cannot redirect a read, so the file is read-denied"}
}

// macGitHostWhy says how macOS protects git's files outside the repository
// (emit/seatbelt's mandatory entries).
const macGitHostWhy = "git's configuration outside the repository (or gitk's start-up file) in the home directory, whatever the settings say: " +
	"the profile denies writing it, created later too, and removing or renaming the directories above it; " +
	"the files $XDG_CONFIG_HOME, $GIT_CONFIG_GLOBAL and $GIT_CONFIG_SYSTEM name, and what these include, are not covered on macOS"

func (m macOS) trailingSeparator() string {
	return "written with a trailing /: it names directories, and Seatbelt never checks a path ending in /, so on macOS this allow matches nothing (as in the reference); without the / it would grant every file the glob matches"
}

// everything: "/" itself stays readable under a deny of "/" (macfiles.go); a
// path below it stands for the rest.
func (m macOS) everything() string { return "/nonexistent/srt-probe" }

func (m macOS) extraWrites() []Line { return nil }

// listsWrite: not the default /dev and /tmp/claude names, the same in
// every policy.
func (m macOS) listsWrite(r policy.PathRule) bool {
	return !(r.Origin == policy.Default && !r.Convenience)
}

func (m macOS) mandatoryBelowWhy() (string, bool) { return ", and at any depth below it", true }

func (m macOS) knobs() []knob {
	pr, n := &m.p.Process, &m.p.Network
	trustd := m.sw("weaker network isolation", "enableWeakerNetworkIsolation", pr.EnableWeakerNetworkIsolation, "trustd is reachable (TLS verification of Go programs), at the cost of a wider mach-lookup", "refused")
	if !pr.EnableWeakerNetworkIsolation {
		// An allowMachLookup prefix ("*", "com.apple.*") opens trustd
		// too.
		for _, s := range n.AllowMachLookup {
			if prefix, ok := strings.CutSuffix(s, "*"); ok && strings.HasPrefix(trustdService, prefix) || s == trustdService {
				trustd.d = Decision{Allow: true, Rule: m.switchOrigin("network.allowMachLookup"), Why: "trustd is reachable through allowMachLookup " + strconv.Quote(s) + ", as enableWeakerNetworkIsolation would make it"}
				break
			}
		}
	}
	out := []knob{
		m.sw("Apple Events", "allowAppleEvents", pr.AllowAppleEvents, "the command may script other applications", "refused"),
		trustd,
		m.sw("pseudo-terminals", "allowPty", pr.AllowPty, "the command may open ptys", "refused"),
		m.sw(localBindingName, "network.allowLocalBinding", n.AllowLocalBinding, "the command may bind and accept on local addresses", "the command cannot listen"),
	}
	for _, s := range n.AllowMachLookup {
		out = append(out, knob{"mach-lookup " + s, Decision{Allow: true, Rule: m.switchOrigin("network.allowMachLookup"), Why: "a listed Mach service"}})
	}
	return out
}

// trustdService is the Mach service enableWeakerNetworkIsolation opens
// (docs/reference.md#macos-optional-blocks).
const trustdService = "com.apple.trustd.agent"
