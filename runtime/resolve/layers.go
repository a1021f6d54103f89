package resolve

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
)

// Landlock is the second layer of a plan (@landlock), resolved: what the
// init step restricts the command to, with Landlock, before it starts.
type Landlock struct {
	// Write are the paths, as the sandbox sees them, below which the
	// command may write: every write root bound writable (the run's TMPDIR
	// at its place inside), then the plan's grants, without duplicates.
	Write []string
	// Scopes are the plan's scopes (policy.LandlockScopes).
	Scopes []string
	// Line is the line of linux/bwrap.args the step came from.
	Line int
}

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

// landlock resolves the plan's @landlock step, if any, once the write
// roots are known.
func (r *resolver) landlock(steps []bwrap.Step) error {
	for _, s := range steps {
		if s.Directive != bwrap.Landlock {
			continue
		}
		grants, scopes, err := landlockStep(s)
		if err != nil {
			return stepError(s, err)
		}
		l := &Landlock{Scopes: scopes, Line: s.Line}
		for _, p := range append(append([]string(nil), r.writeRoots...), grants...) {
			if !slices.Contains(l.Write, p) {
				l.Write = append(l.Write, p)
			}
		}
		r.res.Landlock = l
	}
	return nil
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
