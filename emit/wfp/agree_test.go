package wfp_test

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/wfp"
	"srt.dev/review/query"
	"srt.dev/review/source"
	"srt.dev/schema"
)

// The host the agreement test fills in, as the runtime would.
const (
	agreeHome = `C:\Users\me`
	agreeCwd  = `C:\proj`
)

// tally counts what the agreement test compared.
type tally struct {
	cases, paths, answers, agree int
	// exceptions counts the deliberate differences by reason.
	exceptions map[string]int
	// reranked counts grants the helper's ranking changed (model.reranked).
	reranked int
	// unmodelled counts ACEs on run-time paths the model cannot place.
	unmodelled int
}

// TestAgreeGolden: for every Windows golden case with a plan, the model of
// the plan (interp_test.go) and review/query answer every probe path the
// same way.
func TestAgreeGolden(t *testing.T) {
	plans, err := filepath.Glob("../../golden/windows/*/windows/plan.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(plans) < 20 {
		t.Fatalf("found %d Windows golden plans, want at least 20", len(plans))
	}
	tl := &tally{exceptions: map[string]int{}}
	for _, planFile := range plans {
		dir := filepath.Dir(filepath.Dir(planFile))
		t.Run(filepath.Base(dir), func(t *testing.T) {
			settings, err := os.ReadFile(filepath.Join(dir, "settings.json"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(planFile)
			if err != nil {
				t.Fatal(err)
			}
			var pl wfp.Plan
			if err := json.Unmarshal(b, &pl); err != nil {
				t.Fatal(err)
			}
			// A golden plan names the install phase most plans share
			// ("sameAs") instead of repeating it.
			for i, ph := range pl.Phases {
				if ph.Name == "install" && ph.Operations == nil {
					pl.Phases[i] = sharedInstall(t)
				}
			}
			agree(t, tl, settings, &pl)
		})
	}
	report(t, "golden", tl)
}

// sharedInstall is the install phase the Windows golden plans share.
func sharedInstall(t *testing.T) wfp.Phase {
	t.Helper()
	b, err := os.ReadFile("../../golden/windows/install-phase.json")
	if err != nil {
		t.Fatal(err)
	}
	var ph wfp.Phase
	if err := json.Unmarshal(b, &ph); err != nil || ph.Name != "install" || len(ph.Operations) == 0 {
		t.Fatalf("golden/windows/install-phase.json: %v (name %q, %d operations)", err, ph.Name, len(ph.Operations))
	}
	return ph
}

// TestAgreeGenerated does the same for generated settings files: random
// mixes of read and write grants and denies, credential files, globs,
// brackets, case and separator spellings, drive roots, UNC paths and
// %VAR% roots, with filesystem.disabled now and then.
func TestAgreeGenerated(t *testing.T) {
	const n = 300
	// SRT_AGREE_SEED picks another sample, to explore; CI uses seed 1.
	seed := int64(1)
	if s, err := strconv.ParseInt(os.Getenv("SRT_AGREE_SEED"), 10, 64); err == nil {
		seed = s
	}
	rng := rand.New(rand.NewSource(seed))
	tl := &tally{exceptions: map[string]int{}}
	refused := 0
	for i := 0; i < n; i++ {
		settings := genSettings(rng)
		p, diags, err := compiler.CompileFile("gen.json", settings, schema.Options{OS: schema.OSWindows})
		if err != nil {
			t.Fatalf("case %d: %v\n%s", i, err, settings)
		}
		if diags != nil {
			refused++
			continue
		}
		pl, err := wfp.Emit(p)
		if err != nil {
			refused++
			continue
		}
		b, err := wfp.Render(pl)
		if err != nil {
			t.Fatal(err)
		}
		var back wfp.Plan
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			agree(t, tl, settings, &back)
			if t.Failed() {
				t.Logf("settings:\n%s", settings)
			}
		})
	}
	if refused > n/4 {
		t.Errorf("%d of %d generated files were refused: the generator tests too little", refused, n)
	}
	t.Logf("generated: %d refused by the compiler or the emitter", refused)
	report(t, "generated", tl)
}

func report(t *testing.T, what string, tl *tally) {
	var ex []string
	total := 0
	for r, n := range tl.exceptions {
		ex = append(ex, fmt.Sprintf("%d × %s", n, r))
		total += n
	}
	sort.Strings(ex)
	t.Logf("%s: %d cases, %d probe paths, %d answers: %d agree, %d documented exceptions%s; helper re-ranking changed %d grants; %d ACEs on run-time paths not modelled",
		what, tl.cases, tl.paths, tl.answers, tl.agree, total, strings.Join(append([]string{""}, ex...), "\n  "), tl.reranked, tl.unmodelled)
	if tl.agree+total != tl.answers {
		t.Errorf("%d answers, %d agree and %d exceptions: some were not counted", tl.answers, tl.agree, total)
	}
}

// agree compares the model of pl with review/query on the probes of the
// settings' policy, both from the Windows reading.
func agree(t *testing.T, tl *tally, settings []byte, pl *wfp.Plan) {
	t.Helper()
	src, diags, err := source.Load("settings.json", settings, schema.Options{OS: schema.OSWindows})
	if err != nil || diags != nil {
		t.Fatalf("load: %v %v", err, diags)
	}
	agreeWith(t, tl, src, src.Policy, pl)
}

// agreeWith compares the model of pl, the plan of the Windows reading win,
// with the Windows answers of src, which may come from either reading.
func agreeWith(t *testing.T, tl *tally, src *query.Source, win *policy.Policy, pl *wfp.Plan) {
	t.Helper()
	p := src.Policy
	probes := probePaths(win)
	e := query.New(p, query.Options{Home: queryPath(agreeHome), Cwd: queryPath(agreeCwd)})
	tl.cases++
	tl.paths += len(probes)
	// Two disks at session start: every probe exists; and every other
	// path the policy names is absent with all below it (absent deny
	// targets get placeholders, absent grants are not made, globs match
	// only what exists).
	var half []string
	absent := absentRoots(p)
	for _, pr := range probes {
		gone := false
		for _, a := range absent {
			gone = gone || atOrUnder(pr, a)
		}
		if !gone {
			half = append(half, pr)
		}
	}
	var m *model
	for i, disk := range [][]string{probes, half} {
		h := host{Home: agreeHome, Cwd: agreeCwd, Disk: append([]string{agreeHome, agreeCwd}, disk...)}
		var err error
		m, err = interpret(pl, h)
		if err != nil {
			t.Fatal(err)
		}
		tl.reranked += m.reranked
		tl.unmodelled += len(m.unmodelled)
		for _, pr := range probes {
			q := queryPath(pr)
			for _, c := range []struct {
				verb  string
				model func(string) (bool, *modelACE)
				query func(string, query.Target) query.Decision
			}{{"read", m.Read, e.Read}, {"write", m.Write, e.Write}, {"delete", m.Delete, e.Write}, {"unix-socket", m.UnixSocket, e.UnixSocket}} {
				got, by := c.model(pr)
				want := c.query(q, query.Windows)
				tl.answers++
				if got == want.Allow {
					tl.agree++
					continue
				}
				// On the first disk everything the policy names exists:
				// no exception applies there.
				if r := exception(p, h, pr, got, want); r != "" && i == 1 {
					tl.exceptions[r]++
					continue
				}
				t.Errorf("%s %s (%d of %d probe paths exist): plan says %v (%v), query says %v by %s (%s)", c.verb, pr, len(disk), len(probes), got, by, want.Allow, want.Rule.Key, want.Why)
			}
		}
	}
	agreeNetwork(t, tl, pl, m, e)
}

// TestAgreePortable: a file whose paths read the same on every platform
// (~ and relative paths) is usually explained with the POSIX reading
// (srtc explain on Linux or macOS); its Windows answers must still agree
// with the plan of its Windows reading. Each POSIX golden case that the
// Windows reading accepts is compared that way.
func TestAgreePortable(t *testing.T) {
	cases, err := filepath.Glob("../../golden/testdata/*/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	tl := &tally{exceptions: map[string]int{}}
	skipped, dotdot := 0, 0
	for _, settings := range cases {
		data, err := os.ReadFile(settings)
		if err != nil {
			t.Fatal(err)
		}
		win, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSWindows})
		if err != nil {
			t.Fatal(err)
		}
		var pl *wfp.Plan
		if diags == nil {
			pl, err = wfp.Emit(win)
		}
		if diags != nil || err != nil {
			skipped++ // not portable: the Windows reading refuses it
			continue
		}
		if hasDotDot(win) {
			// The readings differ on "..", deliberately: the POSIX reading
			// folds it once HOME and CWD are filled in, the Windows
			// reading leaves it for the host (compiler.NormalizeWindows),
			// so the two name different paths. Counted, not compared.
			dotdot++
			continue
		}
		b, err := wfp.Render(pl)
		if err != nil {
			t.Fatal(err)
		}
		var back wfp.Plan
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(filepath.Dir(settings)), func(t *testing.T) {
			src, diags, err := source.Load("settings.json", data, schema.Options{OS: schema.OSPosix})
			if err != nil || diags != nil {
				t.Fatalf("load: %v %v", err, diags)
			}
			agreeWith(t, tl, src, win, &back)
		})
	}
	if tl.cases < 10 {
		t.Errorf("only %d portable golden cases (%d not portable): want at least 10", tl.cases, skipped)
	}
	t.Logf("portable: %d golden cases the Windows reading refuses, %d with '..' not compared", skipped, dotdot)
	report(t, "portable", tl)
}

// hasDotDot reports whether a path of p has a ".." segment.
func hasDotDot(p *policy.Policy) bool {
	fs := &p.Filesystem
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks} {
		for _, r := range l {
			for _, seg := range strings.Split(r.Path.String(), "/") {
				if seg == ".." {
					return true
				}
			}
		}
	}
	return false
}

// agreeNetwork compares the plan's WFP filters with what review/query
// says about the network on Windows. query.Connect answers what the
// proxies allow, which windows/plan.json does not hold (the manifest
// plan.json does); what the filters decide is whether anything but the
// proxies is reachable: the proxy range on loopback must be, no other
// address may be, and other loopback ports only as the query's local
// binding answer says.
func agreeNetwork(t *testing.T, tl *tally, pl *wfp.Plan, m *model, e *query.Evaluator) {
	t.Helper()
	lo, hi := 0, 0
	if _, err := fmt.Sscanf(pl.Settings.ProxyPortRange.Value, "%d-%d", &lo, &hi); err != nil {
		t.Fatalf("proxy port range %q: %v", pl.Settings.ProxyPortRange.Value, err)
	}
	local := false
	for _, l := range e.Summary([]query.Target{query.Windows}) {
		if l.Kind == "process" && strings.HasPrefix(l.Subject, "local binding") {
			local = l.Allow
		}
	}
	type probe struct {
		ip   string
		port int
		want bool
		why  string
	}
	probes := []probe{
		{"127.0.0.1", lo, true, "the proxy range"}, {"127.0.0.1", hi, true, "the proxy range"},
		{"::1", lo, true, "the proxy range"}, {"127.0.0.5", hi, true, "the proxy range (127.0.0.0/8)"},
		{"127.0.0.1", 1, false, "port 1 stays blocked for the fence probe"},
		{"127.0.0.1", hi + 1, local, "local binding"}, {"::1", lo - 1, local, "local binding"},
		{"93.184.216.34", 443, false, "only the proxies reach out"}, {"10.0.0.1", lo, false, "only the proxies reach out"},
		{"169.254.169.254", 80, false, "only the proxies reach out"}, {"2606:4700::1111", 443, false, "only the proxies reach out"},
	}
	for _, pr := range probes {
		got, err := m.Connect(net.ParseIP(pr.ip), pr.port)
		if err != nil {
			t.Fatal(err)
		}
		tl.answers++
		if got != pr.want {
			t.Errorf("connect %s port %d: plan says %v, want %v (%s)", pr.ip, pr.port, got, pr.want, pr.why)
			continue
		}
		tl.agree++
	}
}

// The documented exceptions: what review/query deliberately answers
// for names, while the plan's outcome depends on the disk at session
// start, which the query does not know.
const (
	// exAbsentGrant: a grant on a path absent at session start is never
	// made (docs/reference.md#windows-session, docs/reference.md#windows-aces, W12); the query answers as
	// if it were.
	exAbsentGrant = "grant on a path absent at session start: not made, while the query answers for the name"
	// exGlobSnapshot: a pattern is expanded once at session start; a
	// match created later has no deny ACE; the query answers for every
	// match, and says so ("files created later are not covered").
	exGlobSnapshot = "glob snapshot: a match absent at session start gets no deny, while the query denies every match"
)

// exception returns why a difference between the plan and the query is
// deliberate, or "" when it is a disagreement to fix.
func exception(p *policy.Policy, h host, probe string, plan bool, q query.Decision) string {
	fs := &p.Filesystem
	switch {
	case !plan && q.Allow:
		// Any grant that would have made the difference (the query names
		// the first write root that covers the probe, which need not be
		// the one that restores it inside a read deny).
		for _, l := range [][]policy.PathRule{fs.AllowRead, fs.AllowWrite} {
			for _, r := range l {
				if x, ok := targetOf(r, probe); ok && !h.exists(x) {
					return exAbsentGrant
				}
			}
		}
	case plan && !q.Allow:
		if r, ok := ruleOf(p, q.Rule); ok && r.Pattern {
			if x, ok := targetOf(r, probe); ok && !h.exists(x) {
				return exGlobSnapshot
			}
		}
	}
	return ""
}

// targetOf returns the path rule r puts its ACE on that covers probe: its
// path, or for a pattern the probe's nearest ancestor that matches (each
// match has its own ACE; the nearest decides).
func targetOf(r policy.PathRule, probe string) (string, bool) {
	if !r.Pattern {
		x := instantiate(r.Path.String())
		return x, atOrUnder(probe, x)
	}
	pat := (host{Home: agreeHome, Cwd: agreeCwd}).concrete(winPath(fill(r.Path.String())))
	for a := probe; a != ""; a = parentOf(a) {
		if matchGlob(pat, a) {
			return a, true
		}
	}
	return "", false
}

// ruleOf finds the path rule an answer names.
func ruleOf(p *policy.Policy, o policy.Origin) (policy.PathRule, bool) {
	fs := &p.Filesystem
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks} {
		for _, r := range l {
			if r.Origin == o {
				return r, true
			}
		}
	}
	return policy.PathRule{}, false
}

// queryPath spells a concrete Windows path the way policies from the
// Windows reading do: "/" separators.
func queryPath(p string) string { return strings.ReplaceAll(p, `\`, "/") }

// winPath is the reverse of queryPath.
func winPath(p string) string { return strings.ReplaceAll(p, "/", `\`) }

// instantiate fills a policy path's symbolic roots with the test host and
// turns its wildcards into names that match them.
func instantiate(p string) string {
	p = fill(p)
	var out []byte
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			out = append(out, "d1/d2"...)
			i++
		case c == '*':
			out = append(out, 'm')
		case c == '?':
			out = append(out, 'q')
		case c == '[' && strings.ContainsAny(p, "*?"):
			if set, ok := classAt(p[i:]); ok {
				out = append(out, set[0])
				i += len(set) + 1
				continue
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return winPath(string(out))
}

// fill fills a policy path's symbolic roots with the test host.
func fill(p string) string {
	return strings.NewReplacer(string(policy.HomeDrivePath), queryPath(agreeHome), string(policy.HomeDrive), agreeHome[:2],
		string(policy.Home), queryPath(agreeHome), string(policy.Cwd), queryPath(agreeCwd)).Replace(p)
}

// probePaths are the paths the policy names, with their wildcards filled
// in, and paths below, above and beside each, in other case, plus the
// names Linux and macOS protect in the working directory: every one
// exists on the test host's disk.
func probePaths(p *policy.Policy) []string {
	fs := &p.Filesystem
	var named []string
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks, p.Windows.SkippedLiterals} {
		for _, r := range l {
			named = append(named, instantiate(r.Path.String()))
		}
	}
	named = append(named, agreeHome, agreeCwd, `C:\`, `C:\Windows\System32\drivers\etc\hosts`, `\\srv\share\f`, `D:\elsewhere\x`)
	for _, f := range policy.MandatoryFiles {
		named = append(named, agreeCwd+`\`+winPath(f), agreeCwd+`\sub\`+winPath(f))
	}
	for _, d := range policy.MandatoryDirs {
		named = append(named, agreeCwd+`\`+winPath(d)+`\x`)
	}
	seen := map[string]bool{}
	var out []string
	add := func(x string) {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	for _, n := range named {
		add(n)
		add(n + `\x`)
		add(n + `\x\y.txt`)
		add(parentOf(n))
		if !strings.HasSuffix(n, `\`) {
			add(n + "x")
		}
		add(strings.ToUpper(n))
		add(strings.ToUpper(n) + `\X`)
	}
	sort.Strings(out)
	return out
}

// absentRoots are every other path the policy names (wildcards filled
// in), for the disk on which they are absent.
func absentRoots(p *policy.Policy) []string {
	fs := &p.Filesystem
	var out []string
	i := 0
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks} {
		for _, r := range l {
			if x := instantiate(r.Path.String()); i%2 == 1 && parentOf(x) != "" && key(x) != key(agreeHome) && key(x) != key(agreeCwd) {
				out = append(out, x)
			}
			i++
		}
	}
	return out
}

// genSettings writes a random settings file in the Windows spelling.
func genSettings(rng *rand.Rand) []byte {
	roots := []string{`C:\proj`, `C:\p`, `%USERPROFILE%`, `~`, `.`, `C:\`, `\\srv\share`, `%HOMEDRIVE%\data`, `%HOMEDRIVE%%HOMEPATH%`, `D:\w`, `c:\PROJ`, `C:\Users\me`, `\\?\C:\p`, `c:/proj`, `%userprofile%`, `\\?\UNC\srv\share`}
	names := []string{`a`, `b`, `.env`, `secret`, `src`, `vendor`, `out`, `.ssh`, `*.pem`, `**`, `x?`, `[ab]`, `[x].txt`, `A`, `Src`, `keys`}
	path := func() string {
		s := roots[rng.Intn(len(roots))]
		for k := rng.Intn(4); k > 0; k-- {
			s = strings.TrimSuffix(s, `\`) + `\` + names[rng.Intn(len(names))]
		}
		if rng.Intn(8) == 0 && !strings.ContainsAny(s, "*?") {
			s += `\`
		}
		return s
	}
	entry := func() any {
		s := path()
		if rng.Intn(10) == 0 {
			return map[string]any{"path": s, "literal": true}
		}
		return s
	}
	list := func(max int) []any {
		out := []any{}
		for k := rng.Intn(max + 1); k > 0; k-- {
			out = append(out, entry())
		}
		return out
	}
	fs := map[string]any{"denyRead": list(3), "allowRead": list(3), "allowWrite": list(3), "denyWrite": list(2)}
	if rng.Intn(15) == 0 {
		fs["disabled"] = true
	}
	s := map[string]any{
		"network":    map[string]any{"allowedDomains": []string{"example.com"}, "deniedDomains": []string{}, "allowLocalBinding": rng.Intn(4) == 0},
		"filesystem": fs,
	}
	if rng.Intn(3) == 0 {
		var files []any
		for k := 1 + rng.Intn(2); k > 0; k-- {
			mode := "deny"
			if rng.Intn(2) == 0 {
				mode = "mask"
			}
			files = append(files, map[string]any{"path": path(), "mode": mode})
		}
		s["credentials"] = map[string]any{"files": files, "allowPlaintextInject": true}
		if rng.Intn(4) == 0 {
			// The trust bundle's directory gets a read grant on a path
			// only the runtime knows (counted as not modelled).
			s["network"].(map[string]any)["tlsTerminate"] = map[string]any{}
		}
	}
	b, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		panic(err)
	}
	return b
}
