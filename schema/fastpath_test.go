package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/format"
)

// plainSamples are list entries of every kind the grammar and its rules
// treat differently: valid and invalid hosts, bracketed entries that
// bracketedAllow/bracketedDeny split, "*" (deny only), paths ending in a
// separator (inertDenyGlob), the empty string, and non-strings.
var plainSamples = []any{
	"example.com", "EXAMPLE.com:443", "*.example.com", "*.com", "localhost", "localhost:0", "a.b:65536",
	"*", "*:443", "*.*.x.y", "[::1]", "[::1]:443", "[zz]", "[127.0.0.1]", "[::1]x", "[", "http://x.example",
	"x.example/path", "xn--bcher-kva.example", "bücher.example", "a b.example", " example.com", "1.2.3.4", "::1",
	"", "/", "/tmp/*/", "/tmp/x/", "~/x/*/", "./a/", "a/", "C:\\x\\", "\\\\server\\share\\*\\", "/data/[ab]/",
	"~", ".", "..", "/etc/**", "./build/out1/**", "/x\x01y", "\u2028",
	map[string]any{"path": "/x", "literal": true}, map[string]any{"path": "/x", "literal": false},
	map[string]any{"path": ""}, 7, nil, true, []any{"x"},
}

// samplesDoc puts the samples into list key, among plain entries, beyond
// the first chunkSize elements when long, and adds what the rules reading
// that list look at: credentials (coverage rules) or fs.disabled.
func samplesDoc(section, key string, samples []any, long bool, variant int) []byte {
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
	f := "/srv/p%d"
	if section == "network" {
		f = "host%d.example.org"
	}
	n := 3
	if long {
		n = chunkSize + 3
	}
	list := filler(f, n)
	for _, s := range samples {
		list = append(list, s, fmt.Sprintf(f, len(list)))
	}
	doc[section].(map[string]any)[key] = list
	switch variant {
	case 1:
		doc["network"].(map[string]any)["tlsTerminate"] = map[string]any{"excludeDomains": []any{"h1.example.com"}}
		doc["credentials"] = map[string]any{"envVars": []any{
			map[string]any{"name": "T", "mode": "mask", "injectHosts": []any{"h1.example.com", "host1.example.org", "elsewhere.example"}},
		}}
	case 2:
		doc["filesystem"].(map[string]any)["disabled"] = true
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
		section, key := pl.path[0].(string), pl.path[1].(string)
		for _, os := range []OS{OSPosix, OSWindows} {
			for variant := range 3 {
				compareFastSlow(t, os, samplesDoc(section, key, strs, false, variant))
				for _, s := range plainSamples {
					if _, ok := s.(string); !ok {
						compareFastSlow(t, os, samplesDoc(section, key, []any{s}, false, variant))
					}
				}
			}
			compareFastSlow(t, os, samplesDoc(section, key, strs, true, 0))
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
// plain entries is not shown to the grammar, the others are, by index.
func TestPlainShowsLess(t *testing.T) {
	data := []byte(`{"network":{"allowedDomains":["a.example","[::1]","b.example","bad/x"],"deniedDomains":["*"]},
		"filesystem":{"denyRead":["/x","/y/*/"],"allowWrite":["."],"denyWrite":[{"path":"/z","literal":true}]}}`)
	l := &loader{root: mustParse(t, data), g: grammarFor(OSPosix)}
	views := l.plainViews()
	got := map[string][]int{}
	for _, pl := range plainLists {
		if n := pl.path.lookup(l.root); n != nil {
			got[pl.path.String()] = views[n]
		}
	}
	want := map[string][]int{
		"network.allowedDomains": {1, 3},
		"network.deniedDomains":  {},
		"filesystem.denyRead":    {1},
		"filesystem.allowWrite":  {},
		"filesystem.denyWrite":   {0},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("shown elements %v, want %v", got, want)
	}
}

// TestPlainListsRules fails when settings.cue changes what the plain
// checks assume: the element type of each list, and which rules of
// #Checks read those lists. Update plainLists with the grammar.
func TestPlainListsRules(t *testing.T) {
	for _, line := range []string{
		"allowedDomains!: [...#AllowEntry]",
		"deniedDomains!: [...#DenyEntry]",
		"denyRead!: [...#PathEntry]",
		"allowRead?: [...#PathEntry]",
		"allowWrite!: [...#PathEntry]",
		"denyWrite!: [...#PathEntry]",
		"#AllowEntry: =~#re.allowEntry | error(",
		"#DenyEntry: =~#re.denyEntry | error(",
		"#PathEntry: #NonEmpty | #LiteralPath\n",
		`#NonEmpty: string & (strings.MinRunes(1) | error("must not be empty"))` + "\n",
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
	reads := regexp.MustCompile(`\b(allowed|denied|allowedHosts|fs)\b|allowedDomains|deniedDomains|denyRead|denyWrite|allowRead|allowWrite`)
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
	want := []string{"bracketedAllow", "bracketedDeny", "inertDenyGlob", "injectCovered", "maskExcluded"}
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
		os := []OS{OSPosix, OSWindows}[int(which/8)%2]
		compareFastSlow(t, os, samplesDoc(pl.path[0].(string), pl.path[1].(string), []any{s}, false, int(which/16)%3))
	})
}
