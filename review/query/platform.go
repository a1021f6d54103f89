package query

import (
	"fmt"
	"strings"

	"srt.dev/compiler/policy"
)

// A platform is the sandbox semantics of one target: the part of each
// answer that differs between targets. There is one implementation per
// target, each in its own file (linux.go, macos.go, windows.go); the
// exported Evaluator methods pick one with on and keep what the targets
// share. Adding a target means adding a file with a platform, a case in
// on and the target in Targets.
type platform interface {
	indexer
	// target is the platform's target; evaluator the evaluator it
	// answers for.
	target() Target
	evaluator() *Evaluator
	// covers reports whether rule r covers p: p is r's path or below
	// it, or, for a pattern, p or an ancestor matches.
	covers(r policy.PathRule, p string) bool
	// credentialRead answers a read of a file credential mask m covers.
	credentialRead(m policy.PathRule) Decision
	// read answers a read that no credential mask covers, with the
	// file-system policy enabled.
	read(p string) Decision
	// write answers Write; remove answers Remove; unixSocket answers
	// UnixSocket.
	write(p string) Decision
	remove(p string) Decision
	unixSocket(p string) Decision
	// trailingSeparator answers TrailingSeparator.
	trailingSeparator() string

	// The summary's lines that differ.

	// everything is the path the line for what no rule names asks about.
	everything() string
	// extraWrites are write lines no rule names (Kind and Target unset).
	extraWrites() []Line
	// listsWrite reports whether write rule r gets a line of its own.
	listsWrite(r policy.PathRule) bool
	// mandatoryBelowWhy says where, besides directly in the working
	// directory, the mandatory denies protect their names; false when
	// the platform has none.
	mandatoryBelowWhy() (string, bool)
	// knobs are the process switches of the platform.
	knobs() []knob
}

// on returns the semantics of target t.
func (e *Evaluator) on(t Target) platform {
	switch t {
	case Linux:
		return linux{e}
	case MacOS:
		return macOS{e}
	case Windows:
		return windows{e}
	}
	panic(fmt.Sprintf("query: unknown target %q", t))
}

// firstCovering returns the first rule of l that covers p on pl.
func firstCovering(pl platform, l []policy.PathRule, p string) (policy.PathRule, bool) {
	for _, i := range covering(pl, l, p, false) {
		if pl.covers(l[i], p) {
			return l[i], true
		}
	}
	return policy.PathRule{}, false
}

// A layered platform hides what a read deny covers as one unit (Linux: a
// tmpfs or /dev/null mounted over it) and lets a grant strictly inside
// the unit restore what it names (Linux: bound back). macOS follows its
// profile's rule order instead (see macfiles.go), Windows the plan's
// access-control program (see windows.go).
type layered interface {
	platform
	// unit is what read deny d, which covers p, hides of p.
	unit(d policy.PathRule, p string) string
	// restores reports whether grant a, which covers p, lies strictly
	// inside unit.
	restores(a policy.PathRule, p, unit string) bool
	// lifter returns the allowRead that lifts a deny of unit entirely,
	// if the platform has such a rule.
	lifter(unit string) (policy.PathRule, bool)
	// sealed reports whether nothing inside read deny d restores it.
	sealed(d policy.PathRule) bool
	// denyWhy says how read deny d hides a path.
	denyWhy(d policy.PathRule) string
	// readableWhy says why a path no deny hides is readable.
	readableWhy() string
}

// readLayered answers a read on a layered platform: hidden by the most
// specific deny that nothing reopens, else reopened by the first rule
// that does, else readable.
func (e *Evaluator) readLayered(pl layered, p string) Decision {
	var reopened *policy.PathRule
	var hiding *policy.PathRule
	denies := e.p.Filesystem.DenyRead
	for _, i := range covering(pl, denies, p, false) {
		d := denies[i]
		if !pl.covers(d, p) {
			continue
		}
		a, ok := e.reopener(pl, d, p)
		if !ok {
			// The most specific deny that stays is the one to name.
			if hiding == nil || len(d.Path.String()) > len(hiding.Path.String()) {
				hiding = &d
			}
			continue
		}
		if reopened == nil {
			reopened = &a
		}
	}
	if hiding != nil {
		return Decision{Rule: hiding.Origin, Why: pl.denyWhy(*hiding)}
	}
	if reopened != nil {
		why := "reopened inside a read deny by this rule"
		if strings.HasPrefix(reopened.Origin.Key, "filesystem.allowWrite") {
			why = "restored inside a read deny because it is a write root"
		}
		return Decision{Allow: true, Rule: reopened.Origin, Why: why}
	}
	return Decision{Allow: true, Rule: policy.Default, Why: pl.readableWhy()}
}

// reopener returns the rule that reopens p inside read deny d on a
// layered platform: the allowRead that lifts the deny's unit, or an
// allowRead or a write root the settings wrote strictly inside the unit
// (Linux binds write roots back inside a read deny).
func (e *Evaluator) reopener(pl layered, d policy.PathRule, p string) (policy.PathRule, bool) {
	if pl.sealed(d) {
		return policy.PathRule{}, false
	}
	unit := pl.unit(d, p)
	if a, ok := pl.lifter(unit); ok {
		return a, true
	}
	for _, l := range [][]policy.PathRule{e.p.Filesystem.AllowRead, e.userWriteRoots()} {
		for _, i := range covering(pl, l, p, false) {
			if a := l[i]; pl.covers(a, p) && pl.restores(a, p, unit) {
				return a, true
			}
		}
	}
	return policy.PathRule{}, false
}

// hiddenFromWrite returns the most specific read deny that keeps a write
// of p on a layered platform from reaching the host: one that covers p
// and that neither its lifter nor a write root the settings wrote strictly
// inside its unit restores (a sealed deny stays whatever is inside it).
func (e *Evaluator) hiddenFromWrite(pl layered, p string) *policy.PathRule {
	var hiding *policy.PathRule
	denies, roots := e.p.Filesystem.DenyRead, e.userWriteRoots()
	for _, i := range covering(pl, denies, p, false) {
		d := denies[i]
		if !pl.covers(d, p) {
			continue
		}
		unit := pl.unit(d, p)
		restored := false
		if _, ok := pl.lifter(unit); ok {
			restored = true // nothing is mounted over it
		}
		for _, j := range covering(pl, roots, p, false) {
			if a := roots[j]; pl.covers(a, p) && pl.restores(a, p, unit) {
				restored = true
			}
		}
		if pl.sealed(d) {
			restored = false
		}
		if !restored && (hiding == nil || len(d.Path.String()) > len(hiding.Path.String())) {
			hiding = &d
		}
	}
	return hiding
}
