package resolve

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
)

// A directive is how the runtime resolves one kind of @step.
type directive struct {
	// qualifiers are the ":name" suffixes the directive takes.
	qualifiers []bwrap.Qualifier
	// emit writes the step's arguments where the step stands in the plan.
	// nil for the file-system steps, which collect gathers from the whole
	// plan and emitFilesystem writes after "--ro-bind / /", as one unit
	// (a deny and the allows that reopen it must be ordered together).
	emit func(r *resolver, s bwrap.Step, steps []bwrap.Step) error
}

// pathQualifiers are what the compiler writes after a path directive: a
// glob, a literal entry, a convenience directory.
var pathQualifiers = bwrap.Qualifiers

// directives are the steps this runtime resolves, by name. A plan with any
// other step is refused: a step the runtime does not know could be a rule
// it would silently drop.
var directives = map[bwrap.Directive]directive{
	bwrap.UnsetEnv:         {emit: unsetEnv},
	bwrap.MaskEnv:          {emit: maskEnv},
	bwrap.GitSafeDirectory: {emit: gitSafeDirectory},
	bwrap.ProxyEnv:         {emit: proxyEnv},
	bwrap.KernelMask: {emit: func(r *resolver, s bwrap.Step, _ []bwrap.Step) error {
		return r.kernelMask(s.Operand)
	}},
	bwrap.Seccomp: {emit: seccompStep},
	bwrap.PrivateTmp: {emit: func(r *resolver, _ bwrap.Step, _ []bwrap.Step) error {
		r.add("--setenv", "TMPDIR", r.tmp.dest)
		return nil
	}},
	bwrap.AllowWrite:    {qualifiers: pathQualifiers},
	bwrap.DenyRead:      {qualifiers: pathQualifiers},
	bwrap.AllowRead:     {qualifiers: pathQualifiers},
	bwrap.MaskFile:      {qualifiers: pathQualifiers},
	bwrap.DenyWrite:     {qualifiers: pathQualifiers},
	bwrap.MandatoryScan: {},
	bwrap.GitHost:       {},
	bwrap.SrtState:      {},
	bwrap.Landlock:      {},
	bwrap.LandlockWrite: {qualifiers: pathQualifiers},
	bwrap.Limit: {emit: func(r *resolver, s bwrap.Step, _ []bwrap.Step) error {
		l, err := limitStep(s)
		if err != nil {
			return err
		}
		for _, have := range r.res.Limits {
			if have.Kind == l.Kind {
				return fmt.Errorf("@%s: a second %s limit", bwrap.Limit, l.Kind)
			}
		}
		r.res.Limits = append(r.res.Limits, l)
		return nil
	}},
}

// checkSteps refuses a plan with a step this runtime does not know.
func checkSteps(steps []bwrap.Step) error {
	for _, s := range steps {
		if s.Args != nil {
			if len(s.Args) == 0 || !strings.HasPrefix(s.Args[0], "--") {
				return stepError(s, fmt.Errorf("%q is not a bubblewrap option", strings.Join(s.Args, " ")))
			}
			continue
		}
		if s.Directive == bwrap.SrtState {
			if err := checkState(s.Operand); err != nil {
				return stepError(s, err)
			}
		}
		if s.Directive == bwrap.GitHost {
			if err := checkGitHost(s.Operand); err != nil {
				return stepError(s, err)
			}
		}
		d, ok := directives[s.Directive]
		if !ok {
			return stepError(s, fmt.Errorf("unknown step @%s: this srt does not know it; run the plan with the srt that matches the srtc that compiled it", s.Name()))
		}
		if q := s.Qualifier; q != "" && !slices.Contains(d.qualifiers, q) {
			return stepError(s, fmt.Errorf("unknown step @%s: @%s takes no :%s", s.Name(), s.Directive, q))
		}
	}
	return nil
}

// stepError places err at the step's line, when it has one, and names
// the setting behind it, when the line's comment does.
func stepError(s bwrap.Step, err error) error {
	if s.Line > 0 && s.Comment != "" {
		return fmt.Errorf("line %d (%s): %w", s.Line, s.Comment, err)
	}
	if s.Line > 0 {
		return fmt.Errorf("line %d: %w", s.Line, err)
	}
	return err
}

func unsetEnv(r *resolver, s bwrap.Step, _ []bwrap.Step) error {
	r.add("--unsetenv", s.Operand)
	return nil
}

func maskEnv(r *resolver, s bwrap.Step, _ []bwrap.Step) error {
	if r.h.MaskValue == nil {
		return fmt.Errorf("@mask-env %s: no sentinel for masked variables", s.Operand)
	}
	if v, ok := r.h.MaskValue(s.Operand); ok {
		r.add("--setenv", s.Operand, v)
	}
	return nil
}

// gitSafeDirectory writes every safe directory of the plan at the first
// such step (the entries are numbered together).
func gitSafeDirectory(r *resolver, _ bwrap.Step, steps []bwrap.Step) error {
	if r.gitDone {
		return nil
	}
	r.gitDone = true
	var dirs []string
	for _, t := range steps {
		if t.Directive == bwrap.GitSafeDirectory {
			dirs = append(dirs, t.Operand)
		}
	}
	r.gitSafe(dirs)
	return nil
}

func proxyEnv(r *resolver, _ bwrap.Step, _ []bwrap.Step) error {
	for _, kv := range r.h.ProxyEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("@proxy-env: %q is not NAME=VALUE", kv)
		}
		r.add("--setenv", k, v)
	}
	return nil
}

// seccompStep hands bubblewrap the program on the host's descriptor; the
// operand names the rules the program was built from, for the reader.
func seccompStep(r *resolver, _ bwrap.Step, _ []bwrap.Step) error {
	if r.h.SeccompFD <= 0 {
		return errors.New("@seccomp: the plan needs a seccomp program, and no descriptor was given")
	}
	r.add("--seccomp", strconv.Itoa(r.h.SeccompFD))
	return nil
}

// checkState refuses an @srt-state step that names a kind of srt's own
// files this runtime does not know (a plan from a newer srtc). Whatever
// the step says, every kind this runtime knows is applied (see
// Host.State): a plan cannot leave one out.
func checkState(operand string) error {
	known := map[string]bool{}
	for _, s := range policy.SrtState {
		known[string(s.Kind)] = true
	}
	for _, f := range strings.Fields(operand) {
		k, v, _ := strings.Cut(f, "=")
		if k != "read-only" && k != "hidden" {
			return fmt.Errorf("@srt-state: unknown parameter %q (a plan from a newer srtc?)", f)
		}
		for _, kind := range strings.Split(v, ",") {
			if kind != "" && !known[kind] {
				return fmt.Errorf("@srt-state: unknown kind %q (a plan from a newer srtc?)", kind)
			}
		}
	}
	return nil
}
