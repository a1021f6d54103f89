package resolve

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
)

// Landlock is the second layer of a plan (@landlock and its
// @landlock-write lines), resolved: what the init step restricts the
// command to, with Landlock, before it starts.
type Landlock struct {
	// Write are the paths, as the sandbox sees them, below which the
	// command may write: the plan's @landlock-write lines read on this
	// host as the write roots of @allow-write are (writeRoot: their real
	// paths; one inside the run's TMPDIR at its place inside), then the
	// grants of @landlock, without duplicates. Never read from the binds.
	Write []string
	// Lines are, for each of Write, the line of linux/bwrap.args it came
	// from: its @landlock-write line, or the @landlock line for a grant.
	Lines []int
	// Scopes are the plan's scopes (policy.LandlockScopes).
	Scopes []string
	// Line is the line of linux/bwrap.args of the @landlock step.
	Line int
}

// errNoLandlock refuses a plan that does not say what its second layer
// is: one compiled before the second layer had lines of its own, or one
// whose @landlock lines were deleted.
var errNoLandlock = errors.New("the plan has no @landlock line, so it does not say what its second layer (Landlock) is (a plan has @landlock grant=… with its @landlock-write lines, or @landlock off when the file-system policy is disabled): it was compiled by an older srtc, or its @landlock lines were deleted; recompile it with srtc compile")

// landlockStep parses the operand of @landlock: "grant=PATH,... scope=NAME,...".
func landlockStep(s bwrap.Step) (grants, scopes []string, err error) {
	for _, f := range strings.Fields(s.Operand) {
		k, v, _ := strings.Cut(f, "=")
		var list []string
		if v != "" {
			list = strings.Split(v, ",")
		}
		switch k {
		case "grant":
			for _, p := range list {
				if !filepath.IsAbs(p) || filepath.Clean(p) != p {
					return nil, nil, fmt.Errorf("@%s: grant %q is not a clean absolute path", bwrap.Landlock, p)
				}
			}
			grants = list
		case "scope":
			for _, sc := range list {
				if !slices.Contains(policy.LandlockScopes, sc) {
					return nil, nil, fmt.Errorf("@%s: unknown scope %q (a plan from a newer srtc?)", bwrap.Landlock, sc)
				}
			}
			scopes = list
		default:
			return nil, nil, fmt.Errorf("@%s: unknown parameter %q (a plan from a newer srtc?)", bwrap.Landlock, f)
		}
	}
	return grants, scopes, nil
}

// landlock resolves the plan's second layer on its own, from its
// @landlock and @landlock-write lines alone: what the mounts make
// writable plays no part in it. A plan has exactly one @landlock line;
// "@landlock off" leaves Result.Landlock nil.
func (r *resolver) landlock(steps []bwrap.Step) error {
	var head *bwrap.Step
	var writes []bwrap.Step
	for i, s := range steps {
		switch s.Directive {
		case bwrap.Landlock:
			if head != nil {
				return stepError(s, fmt.Errorf("a second @%s line (the first is line %d): a plan has one", bwrap.Landlock, head.Line))
			}
			head = &steps[i]
		case bwrap.LandlockWrite:
			writes = append(writes, s)
		}
	}
	if head == nil {
		return r.placed(0, errNoLandlock)
	}
	if head.Operand == bwrap.LandlockOff {
		if len(writes) > 0 {
			return stepError(writes[0], fmt.Errorf("@%s with @%s %s (line %d): the plan both turns the second layer off and names its write roots", bwrap.LandlockWrite, bwrap.Landlock, bwrap.LandlockOff, head.Line))
		}
		r.note("@%s %s: the plan has no second layer; the command's writes rest on the mounts alone", bwrap.Landlock, bwrap.LandlockOff)
		return nil
	}
	grants, scopes, err := landlockStep(*head)
	if err != nil {
		return stepError(*head, err)
	}
	l := &Landlock{Scopes: scopes, Line: head.Line}
	seen := map[string]bool{}
	add := func(p string, line int) {
		if !seen[p] {
			seen[p] = true
			l.Write = append(l.Write, p)
			l.Lines = append(l.Lines, line)
		}
	}
	// The write roots are read as @allow-write's are, and note the same
	// things: a note already made is not made again.
	before := len(r.res.Notes)
	for _, s := range writes {
		paths, err := r.landlockWrite(s)
		if err != nil {
			return stepError(s, err)
		}
		for _, p := range paths {
			add(p, s.Line)
			r.landlockHost = append(r.landlockHost, r.host(p))
			if real, err := filepath.EvalSymlinks(r.host(p)); err == nil && real != r.host(p) {
				r.landlockHost = append(r.landlockHost, real)
			}
		}
	}
	r.res.Notes = dedupe(r.res.Notes, before)
	for _, g := range grants {
		add(g, head.Line)
	}
	r.res.Landlock = l
	return nil
}

// landlockWrite resolves one @landlock-write line: the paths, as the
// sandbox sees them, below which it lets the command write. A path inside
// the run's TMPDIR is taken at its place inside; any other is read by
// writeRoot, as @allow-write's are (one reached through a symbolic link
// grants nothing), and a convenience path a read deny hides is left out,
// as @allow-write leaves it out.
func (r *resolver) landlockWrite(s bwrap.Step) ([]string, error) {
	ts, err := r.targets(s)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range ts {
		switch {
		case r.tmp != nil && within(t, r.tmp.dest):
			out = append(out, t)
		case s.Qualifier == bwrap.UnlessHidden && r.hidden(t):
			r.note("%s: not writable, a read deny hides it", t)
		default:
			real, f, err := r.writeRoot(t)
			if f != nil {
				f.Close()
				out = append(out, real)
			} else if err != nil {
				// Reached through a link: the same path on an
				// @allow-write line stops the run, or is left out (a
				// default); the second layer grants nothing there.
				r.note("@%s %s: %v: no write of the second layer there", s.Name(), s.Operand, err)
			}
		}
	}
	return out, nil
}

// dedupe drops from notes[from:] what notes already says.
func dedupe(notes []string, from int) []string {
	seen := map[string]bool{}
	for _, n := range notes[:from] {
		seen[n] = true
	}
	out := notes[:from]
	for _, n := range notes[from:] {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// A Limit is one resource limit of the plan (@limit), resolved.
type Limit struct {
	Kind  policy.LimitKind
	Value int64
	// Line is the line of linux/bwrap.args the step came from.
	Line int
}

// limitStep parses the operand of @limit: "KIND=VALUE", a known kind and a
// positive whole number.
func limitStep(s bwrap.Step) (Limit, error) {
	k, v, _ := strings.Cut(s.Operand, "=")
	known := false
	for _, lk := range policy.LimitKinds {
		known = known || string(lk.Kind) == k
	}
	if !known {
		return Limit{}, fmt.Errorf("@%s: unknown limit %q (a plan from a newer srtc?)", bwrap.Limit, s.Operand)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return Limit{}, fmt.Errorf("@%s %s: the value must be a positive whole number", bwrap.Limit, s.Operand)
	}
	return Limit{Kind: policy.LimitKind(k), Value: n, Line: s.Line}, nil
}
