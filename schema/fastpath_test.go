package schema

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"srt.dev/internal/settingsgen"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/format"
)

// plainSamples are list entries of every kind the grammar and its rules
// treat differently: valid and invalid hosts, bracketed entries that
// bracketedAllow/bracketedDeny split, "*" (deny only), paths ending in a
// separator (inertDenyGlob), address ranges (IPv4-mapped ones with short
// prefixes), Mach names, literal path objects, the empty string, and
// non-strings.
var plainSamples = []any{
	"example.com", "EXAMPLE.com:443", "*.example.com", "*.com", "localhost", "localhost:0", "a.b:65536",
	"*", "*:443", "*.*.x.y", "[::1]", "[::1]:443", "[zz]", "[127.0.0.1]", "[::1]x", "[", "http://x.example",
	"x.example/path", "xn--bcher-kva.example", "bücher.example", "a b.example", " example.com", "1.2.3.4", "::1",
	"", "/", "/tmp/*/", "/tmp/x/", "~/x/*/", "./a/", "a/", "C:\\x\\", "\\\\server\\share\\*\\", "/data/[ab]/",
	"~", ".", "..", "/etc/**", "./build/out1/**", "/x\x01y", "\u2028",
	"10.0.0.0/8", "10.0.0.0/33", "fd00::/8", "::ffff:1.2.3.4", "::ffff:1.2.3.4/96", "::ffff:1.2.3.4/64", "0:0:0:0:0:ffff:1.2.3.4/120", "1.2.3.4%eth0",
	"com.example.*", "com.*.x", "a*", "com.example.service", "::1%lo0", "fe80::1%eth0", "H1.Example.COM", "*.Example.com",
	map[string]any{"path": "/x", "literal": true}, map[string]any{"path": "/x", "literal": false},
	map[string]any{"path": "", "literal": true}, map[string]any{"path": "/x", "literal": true, "extra": 1},
	map[string]any{"path": 7, "literal": true}, map[string]any{"literal": true},
	map[string]any{"path": ""}, 7, nil, true, []any{"x"},
}

// concrete is a plainList path with anyKey replaced by a key or index the
// samples documents use.
func concrete(p Path) Path {
	out := Path{}
	for i, s := range p {
		if s == anyKey {
			if p[0] == "credentials" {
				s = 0
			} else if i > 0 && p[i-1] == "ignoreViolations" {
				s = "git push"
			}
		}
		out = append(out, s)
	}
	return out
}

// samplesDoc puts the samples into the list at path, among plain entries,
// beyond the first chunkSize elements when long, and adds what the rules
// reading that list look at: credentials and excludeDomains (coverage
// rules) or fs.disabled.
func samplesDoc(path Path, samples []any, long bool, variant int) []byte {
	filler := func(f string, n int) []any {
		var out []any
		for i := range n {
			out = append(out, fmt.Sprintf(f, i))
		}
		return out
	}
	doc := map[string]any{
		"network":    map[string]any{"allowedDomains": filler("h%d.example.com", 3), "deniedDomains": []any{}},
		"filesystem": map[string]any{"denyRead": []any{}, "allowWrite": []any{}, "denyWrite": []any{}},
	}
	net := doc["network"].(map[string]any)
	switch variant {
	case 1:
		net["tlsTerminate"] = map[string]any{"excludeDomains": []any{"h1.example.com", "*.x.example.org"}}
		doc["credentials"] = map[string]any{
			"envVars": []any{
				map[string]any{"name": "T", "mode": "mask", "injectHosts": []any{"h1.example.com", "host1.example.org", "elsewhere.example", "h2.example.com"}},
				map[string]any{"name": "U", "mode": "mask"},
			},
			"files": []any{map[string]any{"path": "/f", "mode": "deny", "injectHosts": []any{"h0.example.com", "a.x.example.org"}}},
		}
	case 2:
		doc["filesystem"].(map[string]any)["disabled"] = true
	}
	f := "/srv/p%d"
	switch {
	case path[0] == "network" && path[1] != "allowUnixSockets" && path[len(path)-1] != "extraCaCertPaths":
		f = "host%d.example.org"
	case path[0] == "credentials":
		f = "h%d.example.com"
	}
	n := 3
	if long {
		n = chunkSize + 3
	}
	list := filler(f, n)
	for _, s := range samples {
		list = append(list, s, fmt.Sprintf(f, len(list)))
	}
	// Put the list at path, making the objects on the way.
	var parent any = doc
	for i, sel := range path[:len(path)-1] {
		next := path[i+1]
		switch p := parent.(type) {
		case map[string]any:
			if p[sel.(string)] == nil {
				if _, idx := next.(int); idx {
					p[sel.(string)] = []any{map[string]any{}}
				} else {
					p[sel.(string)] = map[string]any{}
				}
			}
			parent = p[sel.(string)]
		case []any:
			parent = p[sel.(int)]
		}
	}
	last := path[len(path)-1].(string)
	parent.(map[string]any)[last] = list
	if m := net["mitmProxy"]; m != nil {
		m.(map[string]any)["socketPath"] = "/tmp/mitm.sock"
	}
	if path[0] == "credentials" {
		net["allowedDomains"] = append(net["allowedDomains"].([]any), "*.example.com", "[::1]:443")
		e := parent.(map[string]any)
		if e["mode"] == nil {
			e["mode"] = "mask"
		}
		if path[1] == "files" && e["path"] == nil {
			e["path"] = "/f"
		}
		if path[1] == "envVars" && e["name"] == nil {
			e["name"] = "T"
		}
		net["tlsTerminate"] = map[string]any{"excludeDomains": []any{"h1.example.com", "*.x.example.org", "::1"}}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return data
}

// TestPlainAgrees checks that showing the grammar only the elements that
// are not plain changes no diagnostic, for every list with a plain check,
// on both rule sets: the string samples together (in a short and a long
// list), and each other sample alone (a type error stops the rules that
// read its list).
func TestPlainAgrees(t *testing.T) {
	var strs []any
	for _, s := range plainSamples {
		if _, ok := s.(string); ok {
			strs = append(strs, s)
		}
	}
	for _, pl := range plainLists {
		path := concrete(pl.path)
		for _, os := range []OS{OSPosix, OSWindows} {
			for variant := range 3 {
				compareFastSlow(t, os, samplesDoc(path, strs, false, variant))
				for _, s := range plainSamples {
					if _, ok := s.(string); !ok {
						compareFastSlow(t, os, samplesDoc(path, []any{s}, false, variant))
					}
				}
			}
			compareFastSlow(t, os, samplesDoc(path, strs, true, 0))
		}
	}
}

// TestPlainAgreesConformance does the same over the conformance cases.
func TestPlainAgreesConformance(t *testing.T) {
	for _, c := range loadCases(t) {
		os := OSPosix
		if c.Platform == "windows" {
			os = OSWindows
		}
		compareFastSlow(t, os, c.Input)
	}
}

func compareFastSlow(t *testing.T, os OS, data []byte) {
	t.Helper()
	_, fast := Options{OS: os}.Load("s.json", data)
	_, slow := Options{OS: os, slow: true}.Load("s.json", data)
	if f, s := fmt.Sprint(fast), fmt.Sprint(slow); f != s {
		t.Errorf("%s %.300s:\nwith plain checks:\n%s\nwithout:\n%s", os, data, f, s)
	}
}

// TestPlainShowsLess checks that the plain checks do their job: a list of
// plain entries is shown to the grammar by its first element only, the
// others by index.
func TestPlainShowsLess(t *testing.T) {
	data := []byte(`{"network":{"allowedDomains":["a.example","[::1]","b.example","bad/x"],"deniedDomains":["*", "a.example"],
		"allowMachLookup":["com.a","com.b","x*y"],"deniedResolvedAddresses":["10.0.0.0/8","::ffff:1.2.3.4/96","1.2.3.4"]},
		"filesystem":{"denyRead":["/x","/y/*/"],"allowWrite":[".","./b"],"denyWrite":[{"path":"/z","literal":true},{"path":"/z","literal":true},{"path":"/z"}]},
		"ignoreViolations":{"*":["/a","/b",7]}}`)
	l := &loader{root: mustParse(t, data), g: grammarFor(OSPosix)}
	views := l.plainViews()
	got := map[string][]int{}
	for _, pl := range plainLists {
		for _, n := range matchPath(l.root, pl.path, nil) {
			got[concrete(pl.path).String()] = views[n]
		}
	}
	want := map[string][]int{
		"network.allowedDomains":          {0, 3},
		"network.deniedDomains":           {0},
		"network.allowMachLookup":         {0, 2},
		"network.deniedResolvedAddresses": {0, 1},
		"filesystem.denyRead":             {0, 1},
		"filesystem.allowWrite":           {0},
		"filesystem.denyWrite":            {0, 2},
		`ignoreViolations["git push"]`:    {0, 2},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shown elements %v, want %v", got, want)
	}
}

// TestCoverViews checks what the coverage rules are shown with
// credentials: of the inject hosts, the first and those not covered by an
// allowed host or covered by an excluded one; of allowedDomains and
// excludeDomains, the entries that cover a shown host and an allowed host
// that is not excluded.
func TestCoverViews(t *testing.T) {
	data := []byte(`{"network":{"allowedDomains":["a.example","*.w.example:443","b.example","c.example","[::1]","d.example"],
		"deniedDomains":[], "tlsTerminate":{"excludeDomains":["zz.example","b.example","*.x.w.example","::1","q.example"]}},
		"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]},
		"credentials":{"envVars":[{"name":"T","mode":"mask","injectHosts":["a.example","C.EXAMPLE","b.example","y.w.example","nope.example","y.x.w.example"]}]}}`)
	l := &loader{root: mustParse(t, data), g: grammarFor(OSPosix)}
	views := l.plainViews()
	got := map[string][]int{}
	for _, p := range []string{"network.allowedDomains", "network.tlsTerminate.excludeDomains", "credentials.envVars.0.injectHosts"} {
		var path Path
		for _, s := range strings.Split(p, ".") {
			if s == "0" {
				path = append(path, 0)
			} else {
				path = append(path, s)
			}
		}
		got[p] = views[path.lookup(l.root)]
	}
	want := map[string][]int{
		// a.example (first, and the first inject host), b.example
		// (excluded inject host), *.w.example (covers y.x.w.example).
		"network.allowedDomains": {0, 1, 2},
		// The first; b.example and *.x.w.example cover a shown inject
		// host.
		"network.tlsTerminate.excludeDomains": {0, 1, 2},
		// The first; b.example is excluded, nope.example not covered,
		// y.x.w.example excluded.
		"credentials.envVars.0.injectHosts": {0, 2, 4, 5},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shown elements\n%v, want\n%v", got, want)
	}
	compareFastSlow(t, OSPosix, data)
}

// TestPlainListsRules fails when settings.cue changes what the plain
// checks assume: the element type of each list, and which rules of
// #Checks read those lists. Update plainLists with the grammar.
func TestPlainListsRules(t *testing.T) {
	for _, line := range []string{
		"allowedDomains!: [...#AllowEntry]",
		"deniedDomains!: [...#DenyEntry]",
		"deniedResolvedAddresses?: [...#AddressRange]",
		"allowUnixSockets?: [...string]",
		"allowMachLookup?: [...#MachName]",
		"stripResponseHeaders?: [...#NonEmpty]",
		"domains!: [...#Host] & (list.MinItems(1) | error(",
		"excludeDomains?: [...#Host]",
		"extraCaCertPaths?: [...#NonEmpty]",
		"denyRead!: [...#PathEntry]",
		"allowRead?: [...#PathEntry]",
		"allowWrite!: [...#PathEntry]",
		"denyWrite!: [...#PathEntry]",
		"ignoreViolations?: [string]: [...string]",
		"safeDirectories?: [...string]",
		"injectHosts?: [...#Host]",
		"#AllowEntry: =~#re.allowEntry | error(",
		"#DenyEntry: =~#re.denyEntry | error(",
		"#AddressRange: =~#re.range & (!~#re.mapped | ",
		"#MachName: =~#re.mach | error(",
		"#Host: =~#re.host | error(",
		"#PathEntry: #NonEmpty | #LiteralPath\n",
		`#NonEmpty: string & (strings.MinRunes(1) | error("must not be empty"))` + "\n",
		"#LiteralPath: close({\n\tpath!:    #NonEmpty\n\tliteral!: true | error(",
	} {
		if !strings.Contains(Source, line) {
			t.Errorf("settings.cue no longer holds %q, which the plain checks of fastpath.go assume", line)
		}
	}
	out := grammarFor(OSPosix).checks.LookupPath(cue.ParsePath("out"))
	it, err := out.Fields()
	if err != nil {
		t.Fatal(err)
	}
	reads := regexp.MustCompile(`\b(allowed|denied|allowedHosts|excluded|fs)\b|allowedDomains|deniedDomains|denyRead|denyWrite|allowRead|allowWrite|` +
		`deniedResolvedAddresses|allowUnixSockets|allowMachLookup|stripResponseHeaders|mitmProxy|excludeDomains|extraCaCertPaths|ignoreViolations|safeDirectories|injectHosts|\bnet\b`)
	var rules []string
	for it.Next() {
		src, err := format.Node(it.Value().Source())
		if err != nil {
			t.Fatal(err)
		}
		// Messages may name a list; only the code counts.
		code := regexp.MustCompile(`msg:\s+"(?:[^"\\]|\\.)*"`).ReplaceAllString(string(src), "")
		if reads.MatchString(code) {
			rules = append(rules, it.Selector().Unquoted())
		}
	}
	slices.Sort(rules)
	want := []string{"bodyInjectCovered", "bodyInjectExcluded", "bracketedAllow", "bracketedDeny", "inertDenyGlob", "injectCovered", "maskExcluded", "maskNeverInjected", "parentProxyURL"}
	if !slices.Equal(rules, want) {
		t.Errorf("the rules of #Checks reading a list with a plain check are %v, want %v: make plainLists say when each rule can fire", rules, want)
	}
}

// FuzzPlain compares the diagnostics with and without the plain checks
// for an arbitrary entry in each list.
func FuzzPlain(f *testing.F) {
	for _, s := range plainSamples {
		if s, ok := s.(string); ok {
			f.Add(s, uint8(0))
		}
	}
	f.Fuzz(func(t *testing.T, s string, which uint8) {
		pl := plainLists[int(which)%len(plainLists)]
		os := []OS{OSPosix, OSWindows}[int(which/32)%2]
		compareFastSlow(t, os, samplesDoc(concrete(pl.path), []any{s}, false, int(which/64)%3))
	})
}

// TestPlainAgreesGenerated compares the diagnostics with and without the
// plain checks on generated policies (internal/settingsgen) with
// credentials, each with some of the mutations below: inject hosts that
// allowedDomains does not cover or that excludeDomains covers (in other
// cases, as wildcards, IP literals, bracketed), excluded entries that
// cover the first allowed hosts or all of them, and invalid entries in
// every list with a plain check.
func TestPlainAgreesGenerated(t *testing.T) {
	sizes := settingsgen.Scale(256)
	sizes.EnvVars, sizes.CredentialFiles, sizes.InjectHosts, sizes.ExcludeDomains = 6, 6, 8, 6
	type doc = map[string]any
	sub := func(m doc, keys ...string) doc {
		for _, k := range keys {
			next, _ := m[k].(doc)
			if next == nil {
				next = doc{}
				m[k] = next
			}
			m = next
		}
		return m
	}
	list := func(m doc, keys ...string) []any {
		l, _ := sub(m, keys[:len(keys)-1]...)[keys[len(keys)-1]].([]any)
		return l
	}
	setList := func(m doc, v []any, keys ...string) { sub(m, keys[:len(keys)-1]...)[keys[len(keys)-1]] = v }
	masked := func(m doc) []doc {
		var out []doc
		for _, k := range []string{"envVars", "files"} {
			for _, e := range list(m, "credentials", k) {
				if e, ok := e.(doc); ok && e["mode"] == "mask" {
					out = append(out, e)
				}
			}
		}
		return out
	}
	addInject := func(r *rand.Rand, m doc, hosts ...any) {
		ms := masked(m)
		e := ms[r.IntN(len(ms))]
		l, _ := e["injectHosts"].([]any)
		for _, h := range hosts {
			l = slices.Insert(l, r.IntN(len(l)+1), h)
		}
		e["injectHosts"] = l
	}
	hostOf := func(a any) string { return strings.SplitN(a.(string), ":", 2)[0] }
	// every excludes every allowed host, or all but the last, and removes
	// the inject hosts: the question is asked of every allowed host.
	every := func(m doc, all bool) {
		al := list(m, "network", "allowedDomains")[:20]
		var keep, ex []any
		for _, a := range al {
			if s := a.(string); s[0] != '[' {
				keep = append(keep, a)
				ex = append(ex, hostOf(s))
			}
		}
		if !all {
			ex = ex[:len(ex)-1]
		}
		setList(m, keep, "network", "allowedDomains")
		setList(m, ex, "network", "tlsTerminate", "excludeDomains")
		for _, e := range masked(m) {
			delete(e, "injectHosts")
		}
		m["credentials"].(doc)["envVars"] = append(list(m, "credentials", "envVars"), doc{"name": "NO_HOSTS", "mode": "mask"})
	}
	mutations := []func(r *rand.Rand, m doc){
		func(r *rand.Rand, m doc) { addInject(r, m, "uncovered.example.net", "a.uncovered.example.net") },
		func(r *rand.Rand, m doc) {
			ex := list(m, "network", "tlsTerminate", "excludeDomains")
			addInject(r, m, ex[0], "deep.sub."+strings.TrimPrefix(ex[2].(string), "*."), strings.ToUpper(ex[1].(string)))
		},
		func(r *rand.Rand, m doc) {
			al := list(m, "network", "allowedDomains")
			for range 5 {
				addInject(r, m, strings.ToUpper(hostOf(al[r.IntN(len(al))])))
			}
		},
		func(r *rand.Rand, m doc) {
			al := list(m, "network", "allowedDomains")
			for _, a := range al {
				if s := a.(string); strings.HasPrefix(s, "*.") {
					addInject(r, m, hostOf(s), "*.x."+hostOf(s)[2:], hostOf(s)[2:])
					break
				}
			}
		},
		func(r *rand.Rand, m doc) {
			al := list(m, "network", "allowedDomains")
			for _, a := range al {
				if s := a.(string); s[0] >= '0' && s[0] <= '9' {
					addInject(r, m, hostOf(s), "10.255.255.254", "*.10.0.0.1")
					break
				}
			}
			setList(m, append(al, "[::1]:443", "[2001:DB8::1]", "[zz]:1", "[::ffff:10.1.2.3]"), "network", "allowedDomains")
			addInject(r, m, "::1", "2001:db8::1", "10.1.2.3", "::2")
			ex := list(m, "network", "tlsTerminate", "excludeDomains")
			setList(m, append(ex, "2001:db8::1"), "network", "tlsTerminate", "excludeDomains")
		},
		func(r *rand.Rand, m doc) {
			// The first allowed hosts excluded: the witness is further on.
			al := list(m, "network", "allowedDomains")
			ex := list(m, "network", "tlsTerminate", "excludeDomains")
			for _, a := range al[:1+r.IntN(8)] {
				ex = append(ex, hostOf(a))
			}
			setList(m, ex, "network", "tlsTerminate", "excludeDomains")
			m["credentials"].(doc)["envVars"] = append(list(m, "credentials", "envVars"), doc{"name": "NO_HOSTS", "mode": "mask"})
		},
		func(r *rand.Rand, m doc) { every(m, false) },
		func(r *rand.Rand, m doc) { every(m, true) },
		func(r *rand.Rand, m doc) {
			ms := masked(m)
			ms[r.IntN(len(ms))]["injectHosts"] = []any{}
		},
		func(r *rand.Rand, m doc) {
			bad := []any{"bad/x", "", 7, "[zz]", "*.com", "10.0.0.0/33", "::ffff:1.2.3.4/64", "a*b*", "/tmp/*/",
				doc{"path": "/x", "literal": false}, "*", "x.example.", "new\nline.example"}
			for _, pl := range plainLists {
				if r.IntN(3) > 0 {
					continue
				}
				path := concrete(pl.path)
				var keys []string
				for _, s := range path {
					if k, ok := s.(string); ok {
						keys = append(keys, k)
					}
				}
				if path[0] == "credentials" {
					addInject(r, m, bad[r.IntN(len(bad))])
					continue
				}
				l := list(m, keys...)
				setList(m, slices.Insert(l, r.IntN(len(l)+1), bad[r.IntN(len(bad))]), keys...)
			}
		},
	}
	for seed := range uint64(20) {
		var m doc
		if err := json.Unmarshal(settingsgen.Generate(seed+1, sizes), &m); err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(seed, 7))
		var applied []int
		for i, mut := range mutations {
			if int(seed) < len(mutations) && i == int(seed) || seed >= uint64(len(mutations)) && r.IntN(3) == 0 {
				mut(r, m)
				applied = append(applied, i)
			}
		}
		data, err := json.MarshalIndent(m, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		_, diags := Options{OS: OSPosix}.Load("s.json", data)
		t.Logf("seed %d: mutations %v: %d diagnostics", seed, applied, len(diags))
		compareFastSlow(t, OSPosix, data)
	}
}

// TestPlainAgreesBodyInject compares the diagnostics with and without the
// plain checks for bodyInjectHosts, whose rules read the entry's
// injectHosts and the allowed and excluded hosts that may cover each of
// its hosts: long lists of plain allowed hosts and inject hosts, where
// the host that covers (or is excluded) is far from the first.
func TestPlainAgreesBodyInject(t *testing.T) {
	var allowed, inject []string
	for i := range 40 {
		allowed = append(allowed, fmt.Sprintf("h%d.example.com", i))
		inject = append(inject, fmt.Sprintf("h%d.example.com", i))
	}
	allowed = append(allowed, "*.cdn.example.com", "uploads.example.org")
	inject = append(inject, "*.cdn.example.com")
	q := func(l []string) string {
		b, _ := json.Marshal(l)
		return string(b)
	}
	for _, body := range []string{
		`["h39.example.com", "x.cdn.example.com", "*.cdn.example.com"]`,
		`["uploads.example.org", "h40.example.com", "*.example.com", "mtls.cdn.example.com"]`,
		`[]`, `["a\nb.example.com"]`, `[7]`,
	} {
		for _, own := range []bool{true, false} {
			ih := ""
			if own {
				ih = `, "injectHosts": ` + q(inject)
			}
			doc := `{"network": {"allowedDomains": ` + q(allowed) + `, "deniedDomains": [], "tlsTerminate": {"excludeDomains": ["h1.example.net", "mtls.cdn.example.com"]}},
				"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
				"credentials": {"envVars": [{"name": "T", "mode": "mask"` + ih + `, "bodyInjectHosts": ` + body + `}]}}`
			compareFastSlow(t, OSPosix, []byte(doc))
		}
	}
}
