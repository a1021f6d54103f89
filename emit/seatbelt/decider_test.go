package seatbelt_test

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/internal/settingsgen"
	"srt.dev/schema"
)

// TestDeciderAgrees compares the Decider's answers (its index: the
// filters filed under the paths they can match) with the linear reading
// (every filter of every rule, seatbelt.DecideLinear): the verdict, the
// deciding rule's matching filters, the error, and every rule's matching
// filters (Matching, for one question in eight). The programs are those
// of every golden settings file, of generated policies of the agreement
// test's spellings and of generated realistic policies, each on two of
// hosts, with every probe present and with none; the questions are file
// operations and unix socket connections on up to 64 paths of each,
// made from the program's filters and the policy's rules: each path,
// paths below and beside it, its ancestors, samples of its globs.
func TestDeciderAgrees(t *testing.T) {
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	files, err := filepath.Glob("../../golden/testdata/*/settings.json")
	if err != nil || len(files) < 30 {
		t.Fatalf("found %d golden settings files (%v), want at least 30", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{f, data})
	}
	rng := rand.New(rand.NewSource(11))
	for i := range 30 {
		inputs = append(inputs, input{fmt.Sprintf("generated %d", i), longSettings(rng)})
	}
	for _, n := range []int{64, 200} {
		inputs = append(inputs, input{fmt.Sprintf("settingsgen %d", n), settingsgen.Generate(uint64(n), settingsgen.Scale(n))})
	}
	questions := 0
	for k, in := range inputs {
		p, diags, err := compiler.CompileFile("settings.json", in.data, schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			continue // a Windows-only case, or a generated policy the compiler refuses
		}
		prog, err := seatbelt.Compile(p)
		if err != nil {
			continue // a path the profile cannot express
		}
		// Two hosts for each program, every probe present on one and
		// none on the other.
		for _, hi := range []int{k % len(hosts), (k + 2) % len(hosts)} {
			h := onHost(hosts[hi], p, func(string) bool { return (k+hi)%2 == 0 })
			params := seatbelt.Params(prog.Defines(h))
			d := prog.Decider(params)
			paths := deciderPaths(prog, p, h, params)
			if len(paths) > 64 {
				r := rand.New(rand.NewSource(int64(len(paths) + hi)))
				r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
				paths = paths[:64]
			}
			for _, path := range paths {
				qs := []seatbelt.Question{{Op: seatbelt.OpSocketOut, Socket: path}}
				for _, op := range []string{seatbelt.OpReadData, "file-read-metadata", seatbelt.OpWriteData, seatbelt.OpUnlink, seatbelt.OpCreate} {
					qs = append(qs, seatbelt.Question{Op: op, Path: path}, seatbelt.Question{Op: op, Path: path, Dir: true})
				}
				for _, q := range qs {
					questions++
					// Every rule's matching filters for one question in
					// eight: the linear reading of them all is slow.
					if err := seatbelt.CompareDecider(d, q, questions%8 == 0); err != nil {
						t.Fatalf("%s on host %d: %v", in.name, hi, err)
					}
				}
			}
		}
	}
	if questions < 80000 {
		t.Errorf("only %d questions asked", questions)
	}
}

// deciderPaths are the paths TestDeciderAgrees asks about on host h:
// made from the values of the program's path filters and from the
// policy's rules, with paths below, beside and above each.
func deciderPaths(prog *seatbelt.Program, p *policy.Policy, h seatbelt.Host, params map[string]string) []string {
	set := map[string]bool{}
	add := func(base string) {
		if base == "" {
			return
		}
		for _, x := range []string{base, base + "/x", base + "/a/b/x.pem", base + "/.env", base + "x", base + "/"} {
			set[x] = true
		}
		for a := base; strings.Contains(a, "/"); a = a[:strings.LastIndexByte(a, '/')] {
			set[a] = true
		}
	}
	var walk func(f seatbelt.Filter)
	walk = func(f seatbelt.Filter) {
		switch f.Kind {
		case seatbelt.Literal, seatbelt.Subpath:
			if v, ok := f.Str.Value(params); ok {
				add(v)
			}
		case seatbelt.Regex, seatbelt.PathRegex:
			if v, ok := f.Str.Value(params); ok {
				// The text before the first metacharacter, unescaped.
				v = strings.TrimPrefix(v, "^")
				if i := strings.IndexAny(v, "([*?+|$.{"); i >= 0 {
					v = v[:i]
				}
				add(strings.ReplaceAll(v, `\`, ""))
			}
		}
		for _, a := range f.Args {
			walk(a)
		}
		for _, m := range f.Members {
			walk(m)
		}
	}
	for _, r := range prog.Rules {
		for _, f := range r.Filters {
			walk(f)
		}
	}
	fs := &p.Filesystem
	for _, l := range [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks, p.Network.AllowUnixSockets} {
		for _, r := range l {
			for _, s := range []string{r.Path.String(), policy.GlobSample(r.Path.String()), strings.ReplaceAll(r.Path.String(), "**/", "")} {
				if c, ok := h.Concrete(s); ok {
					add(policy.MacKernelPath(c))
				}
			}
		}
	}
	for _, x := range []string{"/", "/etc/passwd", "/private/etc/hosts", "/dev/null", "/dev/ttys003", "/private/tmp/claude/x",
		h.Home + "/.ssh/id_rsa", h.Home + "/.npm/_logs/x", h.Cwd + "/.git/config", h.Cwd + "/.git/hooks/pre-commit", h.Cwd + "/src/a.go", h.Cwd + "/a/.vscode/x"} {
		add(x)
	}
	delete(set, "")
	out := make([]string, 0, len(set))
	for x := range set {
		out = append(out, x)
	}
	slices.Sort(out)
	return out
}
