package query

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/internal/settingsgen"
	"srt.dev/schema"
)

// TestIndexAgrees compares every answer of the indexed evaluator with the
// linear reading, in which every rule is a candidate for every question
// (as the evaluator read the lists before it had indexes): the summary on
// every target, and reads, writes, removals and sockets of every path a
// rule names, a path below it, its ancestors and paths the rules' globs
// match, symbolically and with host directories, for generated policies
// and every golden settings file in both path readings.
func TestIndexAgrees(t *testing.T) {
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	for seed := range uint64(4) {
		s := settingsgen.Scale(160 + 40*int(seed))
		inputs = append(inputs, input{fmt.Sprintf("generated-%d", seed), settingsgen.Generate(seed, s)})
	}
	files, _ := filepath.Glob("../../golden/testdata/*/settings.json")
	files = append(files, "../../cmd/srtc/testdata/agent-project/.srt-settings.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{f, data})
	}
	if len(inputs) < 40 {
		t.Fatalf("only %d inputs: the golden files moved?", len(inputs))
	}
	hosts := []Options{{}, {Home: "/home/me", Cwd: "/home/me/proj"}, {Home: "/home/me", Cwd: "/"}, {Cwd: "/work/[x] a"}}
	winHosts := []Options{{}, {Home: `C:\Users\me`, Cwd: `C:\proj`}}
	for _, in := range inputs {
		for _, os := range []schema.OS{schema.OSPosix, schema.OSWindows} {
			p, diags, err := compiler.CompileFile(in.name, in.data, schema.Options{OS: os})
			if err != nil || diags != nil {
				if os == schema.OSWindows {
					continue // spellings the Windows reading refuses
				}
				t.Fatalf("%s: %v %v", in.name, err, diags)
			}
			opts := hosts
			if os == schema.OSWindows {
				opts = winHosts
			}
			for _, o := range opts {
				compareReadings(t, fmt.Sprintf("%s/%s/%+v", in.name, os, o), p, o)
			}
		}
	}
}

func compareReadings(t *testing.T, name string, p *policy.Policy, o Options) {
	t.Helper()
	fast, slow := New(p, o), New(p, o)
	slow.linear = true
	if d := cmp.Diff(slow.Summary(Targets), fast.Summary(Targets)); d != "" {
		t.Errorf("%s: summary (-linear +indexed):\n%s", name, d)
		return
	}
	n := 0
	for _, q := range probes(fast, p) {
		for _, tg := range Targets {
			for _, ask := range []struct {
				verb string
				f    func(*Evaluator) Decision
			}{
				{"read", func(e *Evaluator) Decision { return e.Read(q, tg) }},
				{"write", func(e *Evaluator) Decision { return e.Write(q, tg) }},
				{"remove", func(e *Evaluator) Decision { return e.Remove(q, tg) }},
				{"unix-socket", func(e *Evaluator) Decision { return e.UnixSocket(q, tg) }},
			} {
				if got, want := ask.f(fast), ask.f(slow); got != want {
					t.Errorf("%s: %s %s on %s = %+v (indexed), want %+v (linear)", name, ask.verb, q, tg, got, want)
					if n++; n > 10 {
						t.FailNow()
					}
				}
			}
		}
	}
}

// probes are paths to ask about: each rule's path, a sample of a glob, a
// path below each, and their ancestors, with the options' directories in
// place of the roots.
func probes(e *Evaluator, p *policy.Policy) []string {
	set := map[string]bool{"/": true, "/etc/passwd": true}
	expand := func(q string) string {
		if x, ok := asPath(q); ok {
			return e.expand(x)
		}
		return q
	}
	fs := &p.Filesystem
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks, p.Network.AllowUnixSockets} {
		for _, r := range l {
			for _, q := range []string{r.Path.String(), policy.GlobSample(r.Path.String()), strings.ReplaceAll(r.Path.String(), "**/", "")} {
				q = expand(q)
				set[q] = true
				set[q+"/srt-probe"] = true
				set[q+"/a/b/x.pem"] = true
				for a := q; strings.Contains(a, "/"); a = a[:strings.LastIndexByte(a, '/')] {
					set[a] = true
				}
			}
		}
	}
	for _, q := range []string{".git/hooks/pre-commit", "a/.vscode/x", ".bashrc", "a/b/.git/config", "node_modules/.idea/x"} {
		set[e.expand(policy.Cwd.Join(q))] = true
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}
