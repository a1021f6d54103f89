package query

import (
	"path"
	"strings"
	"sync"

	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
)

// The macOS answers read the Seatbelt program the profile is rendered
// from (emit/seatbelt.Compile) and evaluate it with seatbelt's Decide, on
// the host the Options describe: what srtc explain, lint, diff and test
// say about macOS is what the emitted profile does.

// macProgram is the policy's Seatbelt program, or why there is none.
type macProgram struct {
	prog *seatbelt.Program
	err  error
	// params are the parameters on the host the options describe, and
	// open the same with every gate in force (openGates), made once: an
	// Evaluator answers for one moment of its host, and asks
	// Options.Exists once for each of the program's probes. decider
	// answers with params.
	once         sync.Once
	params, open map[string]string
	decider      *seatbelt.Decider
}

// macProgram compiles the policy's profile once.
func (e *Evaluator) macProgram() *macProgram {
	make := func() *macProgram {
		prog, err := seatbelt.Compile(e.p)
		return &macProgram{prog: prog, err: err}
	}
	x := e.idx
	if x == nil {
		return make()
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.mac == nil {
		x.mac = make()
	}
	return x.mac
}

// The directories the program's roots stand for when the options do not
// name them: absolute paths no host has, so that a question asked about
// ${HOME}/x meets the rules written from ${HOME} and no other.
const (
	symbolicHome = "/${HOME}"
	symbolicCwd  = "/${CWD}"
)

// macHost is the host the options describe, as the runtime passes it to
// sandbox-exec: the directories (stand-ins where the options do not name
// them) and which of the program's probes exist (all of them, without
// Options.Exists).
func (e *Evaluator) macHost(prog *seatbelt.Program) seatbelt.Host {
	h := seatbelt.Host{Home: e.opts.Home, Cwd: e.opts.Cwd, Exists: map[string]bool{}}
	if h.Home == "" {
		h.Home = symbolicHome
	}
	if h.Cwd == "" {
		h.Cwd = symbolicCwd
	}
	for _, q := range prog.Probes() {
		h.Exists[q] = e.opts.Exists == nil || e.opts.Exists(e.expandRaw(q))
	}
	return h
}

// macParams are the sandbox-exec parameters on that host, and the
// program's Decider with them.
func (e *Evaluator) macParams(mp *macProgram) (map[string]string, *seatbelt.Decider) {
	mp.once.Do(func() {
		mp.params = seatbelt.Params(mp.prog.Defines(e.macHost(mp.prog)))
		mp.open = openGates(mp.params)
		mp.decider = mp.prog.Decider(mp.params)
	})
	return mp.params, mp.decider
}

// macQuestionPath is p (as Path returns it) as the kernel hands it to
// Seatbelt: a root the options do not name at its stand-in, /tmp, /var
// and /etc in their /private form.
//
// The kernel hands Seatbelt no "..": a question with one is asked of the
// path it names, except where it climbs above a root the options do not
// name, which the stand-in cannot say.
func macQuestionPath(p string) string {
	for _, r := range []struct{ sym, dir string }{{string(policy.Home), symbolicHome}, {string(policy.Cwd), symbolicCwd}} {
		if p == r.sym || strings.HasPrefix(p, r.sym+"/") {
			switch rel := path.Clean(strings.TrimPrefix(p[len(r.sym):], "/")); {
			case rel == ".." || strings.HasPrefix(rel, "../"):
				return r.dir + p[len(r.sym):]
			case rel == ".":
				return r.dir
			default:
				return r.dir + "/" + rel
			}
		}
	}
	if strings.HasPrefix(p, "/") {
		p = path.Clean(p)
	}
	return macPath(p)
}

// openGates are params with every /private and folded spelling in force,
// as if each path it depends on existed.
func openGates(params map[string]string) map[string]string {
	out := make(map[string]string, len(params))
	for k, v := range params {
		if strings.HasPrefix(k, seatbelt.ParamPrivatePrefix) {
			v = ""
		}
		out[k] = v
	}
	return out
}

// macGateWhyProbe is what an answer that rests on rule r, a spelling that
// holds only where probe exists when srt starts, adds when the options do
// not say what exists.
func (e *Evaluator) macGateWhyProbe(r policy.PathRule, probe string) string {
	if probe == "" || e.opts.Exists != nil {
		return ""
	}
	how := "macOS names it /private" + path.Clean(r.Path.String())
	if strings.Contains(r.Path.String()+"/", "/../") {
		how = "macOS sees it only with \"..\" folded"
	}
	return "; only if " + probe + " exists when srt starts (" + how + ", which the profile grants only then, as the reference does)"
}

// ruleOf is the rule of l with origin o.
func ruleOf(l []policy.PathRule, o policy.Origin) (policy.PathRule, bool) {
	for _, r := range l {
		if r.Origin == o {
			return r, true
		}
	}
	return policy.PathRule{}, false
}

// unixSocket answers a connection to the unix socket at p from the
// program's network-outbound rules.
func (m macOS) unixSocket(p string) Decision {
	mp := m.macProgram()
	if mp.err != nil {
		return Decision{Rule: policy.Default, Why: "srt has no macOS profile for this policy: " + mp.err.Error()}
	}
	params, d := m.macParams(mp)
	q := seatbelt.Question{Op: "network-outbound", Socket: macQuestionPath(p)}
	v, err := d.Decide(q)
	if err != nil {
		return Decision{Rule: policy.Default, Why: "the macOS profile cannot be evaluated: " + err.Error()}
	}
	socks := m.p.Network.AllowUnixSockets
	if v.Allow {
		f := mp.prog.Rules[v.Rule].Filters[v.Filters[0]]
		if f.Kind == seatbelt.RemoteUnix && f.Args[0].Kind == seatbelt.PathRegex {
			return Decision{Allow: true, Rule: m.switchOrigin("network.allowAllUnixSockets"), Why: "every unix socket path is allowed"}
		}
		// Of the paths that allow it, one that holds whatever exists is
		// named, else the first.
		var first *Decision
		for _, f := range socketFilters(mp.prog, false) {
			if ok, _ := seatbelt.Match(f, q, params); !ok {
				continue
			}
			r, _ := ruleOf(socks, f.Origin)
			d := Decision{Allow: true, Rule: f.Origin, Why: "allowed by subpath in the Seatbelt profile" + m.macGateWhyProbe(r, f.Args[0].Gate)}
			if f.Args[0].Gate == "" || m.opts.Exists != nil {
				return d
			}
			if first == nil {
				first = &d
			}
		}
		if first != nil {
			return *first
		}
	}
	return Decision{Rule: policy.Default, Why: "AF_UNIX sockets stay denied except the listed paths" + m.macNotHeldIn(socks, socketFilters(mp.prog, false), socketFilters(mp.prog, true), q)}
}

// socketFilters are the program's unix socket filters the command may
// connect through, in order: those it renders, or (dropped) the
// spellings it leaves out.
func socketFilters(prog *seatbelt.Program, dropped bool) []seatbelt.Filter {
	var out []seatbelt.Filter
	for _, r := range prog.Rules {
		if r.Action != seatbelt.Allow || r.Step != seatbelt.StepNetwork || len(r.Ops) != 1 || r.Ops[0] != "network-outbound" {
			continue
		}
		l := r.Filters
		if dropped {
			l = r.Dropped
		}
		for _, f := range l {
			if f.Kind == seatbelt.RemoteUnix {
				out = append(out, f)
			}
		}
	}
	return out
}

// macNotHeldIn names the first of rules (by its order) whose spelling
// would match q but does not hold on this host, for a deny's answer: one
// of dropped, the spellings the program leaves out (the reference never
// adopts them), or one of kept whose path does not exist here; "" when
// there is none. Of a rule, a dropped spelling is named before a kept
// one, and of kept the first that matches.
func (e *Evaluator) macNotHeldIn(rules []policy.PathRule, kept, dropped []seatbelt.Filter, q seatbelt.Question) string {
	mp := e.macProgram()
	e.macParams(mp)
	open := mp.open
	// The origins of the matching spellings, each filter asked once.
	droppedHit := map[policy.Origin]bool{}
	for _, f := range dropped {
		if droppedHit[f.Origin] {
			continue
		}
		if ok, _ := seatbelt.Match(f, q, open); ok {
			droppedHit[f.Origin] = true
		}
	}
	keptHit := map[policy.Origin]seatbelt.Filter{}
	for _, f := range kept {
		if _, seen := keptHit[f.Origin]; seen || gateOf(f) == "" {
			continue
		}
		if ok, _ := seatbelt.Match(f, q, open); ok {
			keptHit[f.Origin] = f
		}
	}
	for _, r := range rules {
		if droppedHit[r.Origin] {
			return "; " + r.Origin.Key + " names it, but macOS sees it only as /private" + path.Clean(r.Path.String()) + ", a spelling the reference never adopts for that path (realpath's result is refused there)"
		}
		if f, ok := keptHit[r.Origin]; ok {
			return "; " + r.Origin.Key + " names it, but only if " + e.expandRaw(gateOf(f)) + " exists when srt starts, and it does not here"
		}
	}
	return ""
}

// gateOf is the gate of an allow filter, a unix socket's inside it.
func gateOf(f seatbelt.Filter) string {
	if f.Kind == seatbelt.RemoteUnix {
		return f.Args[0].Gate
	}
	return f.Gate
}
