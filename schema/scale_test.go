package schema

import (
	"strings"

	"cuelang.org/go/cue/ast"
	"encoding/json"
	"fmt"
	"testing"
)

// scaledSettings is a valid settings file with n entries in each of the
// network lists and the file-system lists, as a large generated policy
// would have them.
func scaledSettings(tb testing.TB, n int) []byte {
	var allowed, denied, read, write, deny []string
	for i := range n {
		allowed = append(allowed, fmt.Sprintf("host%d.example%d.com:443", i, i%97))
		denied = append(denied, fmt.Sprintf("*.blocked%d.example.org", i))
		read = append(read, fmt.Sprintf("~/secrets/%d", i))
		write = append(write, fmt.Sprintf("./build/out%d/**", i))
		deny = append(deny, fmt.Sprintf("./build/out%d/keep", i))
	}
	doc := map[string]any{
		"network":    map[string]any{"allowedDomains": allowed, "deniedDomains": denied},
		"filesystem": map[string]any{"denyRead": read, "allowWrite": write, "denyWrite": deny},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkLoadScaling validates settings files of growing size. The time
// and memory per operation must grow linearly with the entry count.
func BenchmarkLoadScaling(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			data := scaledSettings(b, n/5)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, diags := (Options{OS: OSPosix}).Load("large.json", data); diags != nil {
					b.Fatal(diags)
				}
			}
		})
	}
}

// TestLongLists checks that arrays longer than chunkSize, which the grammar
// sees a chunk at a time, are checked whole: every element by the grammar
// and by #Checks, with the index and line of the element itself, and the
// coverage rule against every allowed domain.
func TestLongLists(t *testing.T) {
	allowed := make([]string, 2500)
	for i := range allowed {
		allowed[i] = fmt.Sprintf("host%d.example.com", i)
	}
	allowed[3] = "http://x.example.com"
	allowed[1500] = "a/b.example.com"
	allowed[2499] = "[zz]"
	read := make([]any, 1200)
	for i := range read {
		read[i] = fmt.Sprintf("~/secret/%d", i)
	}
	read[1100] = "/tmp/*/"
	read[1199] = ""
	read[1150] = map[string]any{"path": "/x", "literal": false}
	doc := map[string]any{
		"network":    map[string]any{"allowedDomains": allowed, "deniedDomains": []string{}, "tlsTerminate": map[string]any{}},
		"filesystem": map[string]any{"denyRead": read, "allowWrite": []string{}, "denyWrite": []string{}},
		"credentials": map[string]any{"envVars": []any{map[string]any{
			"name": "TOKEN", "mode": "mask", "injectHosts": []string{"host2400.example.com", "nowhere.example.net"},
		}}},
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	_, diags := (Options{OS: OSPosix}).Load("long.json", data)
	var got []string
	for _, d := range diags {
		n := d.Path.lookup(mustParse(t, data))
		line, _ := lineCol(newlineOffsets(data), n.Off)
		if d.Line != line {
			t.Errorf("%s: line %d, want %d", d.Path, d.Line, line)
		}
		got = append(got, d.Path.String())
	}
	want := []string{ // in file order: json.Marshal sorts the keys
		"credentials.envVars[0].injectHosts[1]",
		"filesystem.denyRead[1100]",
		"filesystem.denyRead[1150].literal",
		"filesystem.denyRead[1199]",
		"network.allowedDomains[3]",
		"network.allowedDomains[1500]",
		"network.allowedDomains[2499]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics at\n%s\nwant\n%s\n%v", strings.Join(got, "\n"), strings.Join(want, "\n"), diags)
	}
}

func mustParse(t *testing.T, data []byte) *node {
	t.Helper()
	n, err := parseJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestGrammarSeesChunks checks that no evaluation of the grammar is shown a
// list longer than chunkSize (CUE's time grows with the square of a list's
// length), and that the passes together show every element.
func TestGrammarSeesChunks(t *testing.T) {
	root := mustParse(t, scaledSettings(t, 2*chunkSize+7))
	seen := map[string]bool{}
	l := &loader{root: root, slow: true}
	n := l.passes(root)
	if n != 3 {
		t.Fatalf("passes = %d, want 3", n)
	}
	for pass := range n {
		r := &renderer{l: l, pass: pass}
		ast.Walk(r.expr(root, Path{}), func(node ast.Node) bool {
			if l, ok := node.(*ast.ListLit); ok {
				if len(l.Elts) > chunkSize {
					t.Errorf("pass %d shows a list of %d elements", pass, len(l.Elts))
				}
				for _, e := range l.Elts {
					if s, ok := e.(*ast.BasicLit); ok {
						seen[s.Value] = true
					}
				}
			}
			return true
		}, nil)
	}
	if want := 5 * (2*chunkSize + 7); len(seen) != want {
		t.Errorf("the passes show %d distinct elements, want %d", len(seen), want)
	}
}
