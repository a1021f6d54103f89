package query

import (
	"slices"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
)

// The macOS read, write and remove answers: the operation asked of the
// Seatbelt program (file-read-data, file-write-data, file-write-unlink),
// its verdict explained by the rule that decided and the settings entry
// its matching filter was made from.

// A macAsk is one question asked of the program on the host the options
// describe.
type macAsk struct {
	prog   *seatbelt.Program
	params map[string]string
	d      *seatbelt.Decider
	q      seatbelt.Question
	v      seatbelt.Verdict
}

// ask evaluates op on the file at p (as Path returns it); the Decision is
// set when the program cannot answer.
func (m macOS) ask(op, p string) (macAsk, *Decision) {
	mp := m.macProgram()
	if mp.err != nil {
		return macAsk{}, &Decision{Rule: policy.Default, Why: "srt has no macOS profile for this policy: " + mp.err.Error()}
	}
	a := macAsk{prog: mp.prog, q: seatbelt.Question{Op: op, Path: macQuestionPath(p)}}
	a.params, a.d = m.macParams(mp)
	v, err := a.d.Decide(a.q)
	if err != nil {
		return macAsk{}, &Decision{Rule: policy.Default, Why: "the macOS profile cannot be evaluated: " + err.Error()}
	}
	a.v = v
	return a, nil
}

// step is the step of the deciding rule; StepBase when none decided.
func (a macAsk) step() seatbelt.Step {
	if a.v.Rule < 0 {
		return seatbelt.StepBase
	}
	return a.prog.Rules[a.v.Rule].Step
}

// matching are the filters of the program's rule of step st that match
// the question; a group regex stands for its member entries that match.
func (a macAsk) matching(st seatbelt.Step) []seatbelt.Filter {
	var out []seatbelt.Filter
	for i, r := range a.prog.Rules {
		if r.Step != st {
			continue
		}
		for _, f := range macMatching(a.prog, a.d, i, a.q, a.params) {
			if len(f.Members) == 0 {
				out = append(out, f)
				continue
			}
			for _, x := range f.Members {
				if ok, _ := seatbelt.Match(x, a.q, a.params); ok {
					out = append(out, x)
				}
			}
		}
	}
	return out
}

// macMatching are the filters of rule i that match q, in order: those
// the Decider finds; where it meets an error (a parameter not defined),
// every filter Match answers true for.
func macMatching(prog *seatbelt.Program, d *seatbelt.Decider, i int, q seatbelt.Question, params map[string]string) []seatbelt.Filter {
	fs := prog.Rules[i].Filters
	var out []seatbelt.Filter
	hits, err := d.Matching(i, q)
	if err != nil {
		for _, f := range fs {
			if ok, _ := seatbelt.Match(f, q, params); ok {
				out = append(out, f)
			}
		}
		return out
	}
	for _, j := range hits {
		out = append(out, fs[j])
	}
	return out
}

// rule is the program's rule of step st.
func (a macAsk) rule(st seatbelt.Step) (seatbelt.Rule, bool) {
	for _, r := range a.prog.Rules {
		if r.Step == st {
			return r, true
		}
	}
	return seatbelt.Rule{}, false
}

// An origins finds the rules of a list by their origin: an answer ranks
// the filters that match by the position of their rule in the settings.
type origins struct {
	l   []policy.PathRule
	pos map[policy.Origin]int // the first rule with each origin
}

func newOrigins(l []policy.PathRule) *origins {
	x := &origins{l: l, pos: make(map[policy.Origin]int, len(l))}
	for i, r := range l {
		if _, ok := x.pos[r.Origin]; !ok {
			x.pos[r.Origin] = i
		}
	}
	return x
}

// index is the position of the first rule with origin o, len(l) when
// none has it.
func (x *origins) index(o policy.Origin) int {
	if i, ok := x.pos[o]; ok {
		return i
	}
	return len(x.l)
}

// rule is the first rule with origin o.
func (x *origins) rule(o policy.Origin) (policy.PathRule, bool) {
	if i, ok := x.pos[o]; ok {
		return x.l[i], true
	}
	return policy.PathRule{}, false
}

// The lists the macOS answers rank by, each found by origin: the read
// denies, the read allows, the write denies, and the read denies followed
// by the credential masks.
type macOrigins struct {
	denyRead, allowRead, denyWrite, denies *origins
}

// macOrigins are the policy's, made once for the evaluator.
func (e *Evaluator) macOrigins() *macOrigins {
	make := func() *macOrigins {
		fs := &e.p.Filesystem
		return &macOrigins{
			denyRead:  newOrigins(fs.DenyRead),
			allowRead: newOrigins(fs.AllowRead),
			denyWrite: newOrigins(fs.DenyWrite),
			denies:    newOrigins(append(slices.Clone(fs.DenyRead), fs.CredentialMasks...)),
		}
	}
	x := e.idx
	if x == nil {
		return make()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.macOrigins == nil {
		x.macOrigins = make()
	}
	return x.macOrigins
}

// ptyAnswer is the answer where allowPty's rules decide.
func (m macOS) ptyAnswer() Decision {
	return Decision{Allow: true, Rule: m.switchOrigin("allowPty"), Why: "a pseudo-terminal device: allowPty opens it"}
}

// covers reports whether r, a read deny or a credential mask, covers p in
// the program: one of the read-deny filters made from it matches.
func (m macOS) covers(r policy.PathRule, p string) bool {
	mp := m.macProgram()
	if mp.err != nil {
		return false
	}
	params, d := m.macParams(mp)
	q := seatbelt.Question{Op: seatbelt.OpReadData, Path: macQuestionPath(p)}
	for i, x := range mp.prog.Rules {
		if x.Step != seatbelt.StepReadDeny {
			continue
		}
		for _, f := range macMatching(mp.prog, d, i, q, params) {
			if f.Origin == r.Origin {
				return true
			}
		}
	}
	return false
}

// read answers a read of p: file-read-data.
func (m macOS) read(p string) Decision {
	a, bad := m.ask(seatbelt.OpReadData, p)
	if bad != nil {
		return *bad
	}
	fs, o := &m.p.Filesystem, m.macOrigins()
	// The allow named where one matches: one that holds whatever exists,
	// else the last that matches.
	var allow *seatbelt.Filter
	for _, f := range a.matching(seatbelt.StepReadAllow) {
		if allow == nil || allow.Gate != "" && m.opts.Exists == nil {
			allow = &f
		}
	}
	switch st := a.step(); {
	case a.v.Allow && st == seatbelt.StepReadRoot:
		denies := a.matching(seatbelt.StepReadDeny)
		first := slices.MinFunc(denies, func(x, y seatbelt.Filter) int {
			return o.denyRead.index(x.Origin) - o.denyRead.index(y.Origin)
		})
		return Decision{Allow: true, Rule: first.Origin, Why: "the root directory itself stays readable (dyld needs it); what is below it stays denied"}
	case a.v.Allow && st == seatbelt.StepReadAllow && len(a.matching(seatbelt.StepReadDeny)) > 0:
		r, _ := o.allowRead.rule(allow.Origin)
		return Decision{Allow: true, Rule: allow.Origin, Why: "reopened inside a read deny by this rule" + m.macGateWhyProbe(r, allow.Gate)}
	case st == seatbelt.StepPty:
		return m.ptyAnswer()
	case a.v.Allow:
		return Decision{Allow: true, Rule: policy.Default, Why: "everything is readable unless a read deny hides it"}
	}
	// Denied: by the most specific deny that decides (first in the
	// settings' order among equals); with no allow matching, every deny
	// that covers the path decides.
	denies := a.matching(seatbelt.StepReadDeny)
	if allow != nil {
		denies = a.matching(seatbelt.StepReadLate)
	}
	var hiding *policy.PathRule
	for _, f := range denies {
		d, ok := o.denyRead.rule(f.Origin)
		if !ok {
			continue
		}
		if hiding == nil || len(d.Path.String()) > len(hiding.Path.String()) ||
			len(d.Path.String()) == len(hiding.Path.String()) && o.denyRead.index(d.Origin) < o.denyRead.index(hiding.Origin) {
			hiding = &d
		}
	}
	if hiding == nil {
		return Decision{Rule: policy.Default, Why: "hidden by the macOS profile"}
	}
	why := "hidden by a read deny"
	if allow != nil {
		why += " (it is repeated after the allows, so " + allow.Origin.Key + " does not reopen it)"
	} else if r, ok := a.rule(seatbelt.StepReadAllow); ok {
		why += m.macNotHeldIn(fs.AllowRead, r.Filters, r.Dropped, a.q)
	}
	return Decision{Rule: hiding.Origin, Why: why}
}

// write answers a change of the file at p: file-write-data.
func (m macOS) write(p string) Decision {
	fs := &m.p.Filesystem
	if fs.Disabled {
		return m.disabled()
	}
	a, bad := m.ask(seatbelt.OpWriteData, p)
	if bad != nil {
		return *bad
	}
	switch st := a.step(); {
	case st == seatbelt.StepPty:
		return m.ptyAnswer()
	case a.v.Allow && st == seatbelt.StepWriteRoot:
		return m.writeRoot(a, p)
	case !a.v.Allow && (st == seatbelt.StepWriteDeny || st == seatbelt.StepGitHost):
		return m.writeDeny(a)
	case a.v.Allow:
		return Decision{Allow: true, Rule: policy.Default, Why: "allowed by the macOS profile"}
	}
	why := noWriteRootWhy
	if r, ok := a.rule(seatbelt.StepWriteRoot); ok {
		why += m.macNotHeldIn(fs.AllowWrite, r.Filters, r.Dropped, a.q)
	}
	return Decision{Rule: policy.Default, Why: why}
}

// writeRoot explains a write the write roots allow: the first root that
// holds whatever exists names it, else the first that matches.
func (m macOS) writeRoot(a macAsk, p string) Decision {
	var root *seatbelt.Filter
	for _, f := range a.matching(seatbelt.StepWriteRoot) {
		gated := f.Gate != "" && m.opts.Exists == nil
		if root == nil || !gated {
			root = &f
		}
		if !gated {
			break
		}
	}
	r := m.writeRootRule(*root, a.q.Path)
	why := rootWhy(r) + m.macGateWhyProbe(r, root.Gate)
	if m.macDeepProtectedDir(p) {
		why += "; a protected directory below the working directory: what is inside it may not be written, but the directory itself may be created, renamed or removed (the profile's CWD/**/NAME/**, docs/reference.md#mandatory-denies)"
	}
	return Decision{Allow: true, Rule: r.Origin, Why: why}
}

// writeRootRule is the allowWrite rule write-root filter f was made from:
// of the rules with its origin (the built-in ones share one), the one
// whose path holds q.
func (m macOS) writeRootRule(f seatbelt.Filter, q string) policy.PathRule {
	var first *policy.PathRule
	for _, r := range m.p.Filesystem.AllowWrite {
		if r.Origin != f.Origin {
			continue
		}
		if first == nil {
			first = &r
		}
		if x := macQuestionPath(m.expand(r.Path)); q == x || strictlyInside(q, x) {
			return r
		}
	}
	if first == nil {
		return policy.PathRule{Origin: f.Origin}
	}
	return *first
}

// writeDeny explains a write a write deny refuses: the first denyWrite
// entry (in the settings' order, the mandatory names in the working
// directory among them) whose filter matches; else git's files in the
// home directory; else the mandatory names below the working directory.
func (m macOS) writeDeny(a macAsk) Decision {
	fs := &m.p.Filesystem
	best := len(fs.DenyWrite)
	below := false
	for _, f := range a.matching(seatbelt.StepWriteDeny) {
		i := m.macOrigins().denyWrite.index(f.Origin)
		if f.Origin == policy.Mandatory {
			i = m.mandatoryIndex(f, a.params)
		}
		if i < best {
			best = i
		}
		below = below || i == len(fs.DenyWrite)
	}
	switch {
	case best < len(fs.DenyWrite) && fs.DenyWrite[best].Origin == policy.Mandatory:
		return Decision{Rule: policy.Mandatory, Why: "mandatory write deny (shell start-up files, git and editor configuration, agent commands)"}
	case best < len(fs.DenyWrite):
		return Decision{Rule: fs.DenyWrite[best].Origin, Why: "write deny: wins over allowWrite, even at or above a write root"}
	case len(a.matching(seatbelt.StepGitHost)) > 0:
		return Decision{Rule: policy.Mandatory, Why: macGitHostWhy}
	case below && fs.MandatoryScan != nil:
		return Decision{Rule: fs.MandatoryScan.Origin, Why: "mandatory write deny below the working directory (any depth, names created later too)"}
	}
	return Decision{Rule: policy.Default, Why: "write deny of the macOS profile"}
}

// mandatoryIndex is the position in denyWrite of the mandatory entry a
// mandatory filter f spells (a subpath of a name in the working
// directory), len(denyWrite) for the others (the names below it).
func (m macOS) mandatoryIndex(f seatbelt.Filter, params map[string]string) int {
	l := m.p.Filesystem.DenyWrite
	if f.Kind != seatbelt.Subpath {
		return len(l)
	}
	v, _ := f.Str.Value(params)
	for i, r := range l {
		if r.Origin == policy.Mandatory && macQuestionPath(m.expand(r.Path)) == v {
			return i
		}
	}
	return len(l)
}

// remove answers removing or renaming the file at p: a write that
// file-write-unlink allows too.
func (m macOS) remove(p string) Decision {
	w := m.write(p)
	if !w.Allow {
		return w
	}
	a, bad := m.ask(seatbelt.OpUnlink, p)
	if bad != nil {
		return *bad
	}
	if a.v.Allow {
		return w
	}
	// A directory holding a write-protected path.
	best, bestOrigin := -1, policy.Origin{}
	for _, f := range a.matching(seatbelt.StepWriteMoveBlock) {
		i, o := m.pinRank(f, a.q.Path)
		if best < 0 || i < best {
			best, bestOrigin = i, o
		}
	}
	if best >= 0 {
		return Decision{Rule: bestOrigin, Why: "holds a write-protected path: the directory and those above it cannot be removed or renamed"}
	}
	// A read-denied path, or a directory holding one, inside a write root.
	denies := m.macOrigins().denies
	var hit *seatbelt.Filter
	rank := func(f seatbelt.Filter) int {
		i := 2 * denies.index(f.Origin)
		if f.Pin {
			i++
		}
		return i
	}
	for _, f := range a.matching(seatbelt.StepTrailing) {
		if hit == nil || rank(f) < rank(*hit) {
			hit = &f
		}
	}
	switch {
	case hit == nil:
		return Decision{Rule: policy.Default, Why: "the macOS profile refuses removing it"}
	case hit.Pin:
		return Decision{Rule: hit.Origin, Why: "holds a read-denied path inside a write root: it cannot be removed or renamed (that would carry the denied files out of the deny's reach)"}
	}
	return Decision{Rule: hit.Origin, Why: "read-denied inside a write root: it may be changed but not removed or renamed (a renamed copy would be readable)"}
}

// pinRank orders the write-protecting filters that keep directory dir in
// place as the entries they protect: denyWrite's (the mandatory names in the working
// directory among them), then git's files in the home directory, then
// the mandatory names' directories in the working directory (the
// working directory and .git/hooks).
func (m macOS) pinRank(f seatbelt.Filter, dir string) (int, policy.Origin) {
	fs := &m.p.Filesystem
	if f.Origin != policy.Mandatory {
		return m.macOrigins().denyWrite.index(f.Origin), f.Origin
	}
	holds := func(p policy.Path) bool {
		x := macQuestionPath(m.expand(p))
		return x == dir || strictlyInside(x, dir)
	}
	for i, r := range fs.DenyWrite {
		if r.Origin == policy.Mandatory && holds(r.Path) {
			return i, r.Origin
		}
	}
	for _, r := range m.gitHostRules() {
		if holds(r.Path) {
			return len(fs.DenyWrite), r.Origin
		}
	}
	o := policy.Mandatory
	if fs.MandatoryScan != nil {
		o = fs.MandatoryScan.Origin
	}
	return len(fs.DenyWrite) + 1, o
}

// macDeepProtectedDir reports whether p is itself a mandatory directory
// (.vscode, .idea, .git/hooks, .claude/commands, .claude/agents) deeper
// than directly in the working directory, which macOS protects only
// inside.
func (e *Evaluator) macDeepProtectedDir(p string) bool {
	below, ok := policy.Cwd.Within(e.expand(policy.Cwd.Path()), p)
	if !ok || below.Rel() == "" || e.p.Filesystem.MandatoryScan == nil {
		return false
	}
	segs := strings.Split(below.Rel(), "/")
	n := len(segs)
	last := segs[n-1]
	switch {
	case n >= 2 && (last == ".vscode" || last == ".idea"):
		return true
	case n >= 3 && (segs[n-2] == ".git" && last == "hooks" || segs[n-2] == ".claude" && (last == "commands" || last == "agents")):
		return true
	}
	return false
}
