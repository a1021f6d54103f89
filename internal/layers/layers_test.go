package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// root is the module root, two levels up from this package.
const root = "../.."

// The import graph is read for each of these systems: a file built only
// for one of them obeys the rules too.
var systems = []string{"linux", "darwin", "windows"}

// The pure packages are the packages under these and what they import of
// this module.
var pureRoots = []string{"srt.dev/schema/...", "srt.dev/compiler/...", "srt.dev/emit/..."}

// hostImports are the imports that reach the host: files, processes,
// system calls, the network.
var hostImports = []string{
	"os", "os/exec", "os/user", "os/signal", "syscall", "io/ioutil",
	"net", "net/http", "plugin", "golang.org/x/sys/unix", "golang.org/x/sys/windows",
}

// pureExceptions are the host imports a pure package may make, each with
// its reason. An exception that no longer applies (the package is not
// pure, or no longer makes the import) fails the test: remove it.
var pureExceptions = []exception{}

// exception is a host import a pure package may make, and why.
type exception struct{ pkg, imp, why string }

// The house's layers, lowest first: a package imports only from its own
// layer or below (tests aside). The first pattern that matches a package
// gives its layer; "p/..." matches p and every package below it. A package
// that no pattern matches, and a pattern that matches no package, fail the
// test.
var layers = []struct {
	pattern string
	layer   int
	what    string
}{
	{"srt.dev/internal/perf", 7, "a program: measures srt, may use anything"},
	{"srt.dev/internal/settingsgen", 0, "generates settings files: a leaf"},
	{"srt.dev/internal/settingsgen/...", 7, "programs around the generator"},
	{"srt.dev/internal/...", 0, "leaves: helpers and test fixtures"},
	{"srt.dev/schema/builtin", 0, "settings facts srt needs without the grammar"},
	{"srt.dev/compiler/policy/...", 1, "the IR and its semantics"},
	{"srt.dev/schema/...", 2, "the grammar"},
	{"srt.dev/compiler/...", 2, "the compiler"},
	{"srt.dev/emit/...", 3, "the emitters"},
	{"srt.dev/review/...", 4, "the review tools"},
	{"srt.dev/runtime/...", 5, "the runtime"},
	{"srt.dev/cmd/...", 6, "the commands"},
	{"srt.dev/examples/...", 6, "examples: programs built on the module"},
	{"srt.dev/golden", 6, "the golden tests of every artifact"},
}

// forbidden are imports the layers alone would allow, with the reason
// they are not.
var forbidden = []struct{ from, to, why string }{
	{"srt.dev/runtime/...", "srt.dev/review/...", "the runtime decides by the policy, never by the review tools"},
}

// lean are packages a program must not link, even indirectly, each with the
// reason.
var lean = []struct {
	program string
	links   []string
	why     string
}{
	{"srt.dev/cmd/srt", []string{"net", "crypto/tls", "crypto/x509", "srt.dev/runtime/sandbox", "srt.dev/runtime/proxy/...", "srt.dev/compiler/...", "srt.dev/schema/..."},
		"srt, the front, starts before every command, and a warm command pays for little else: it links the command line, the warm server's protocol and runtime/private, nothing that makes sandboxes or proxies (cmd/srt)"},
	{"srt.dev/cmd/srt-main", []string{"cuelang.org/...", "srt.dev/schema", "srt.dev/compiler"},
		"srt-main starts on every cold run: it links neither the grammar (CUE) nor the compiler, which srtc holds"},
	{"srt.dev/cmd/srt-main", []string{"github.com/alecthomas/kong", "go/ast", "go/doc"},
		"srt parses its command line itself (cmd/internal/cmdline): kong and the go/* packages it brings cost every start 3-4 ms (docs/srt.md, Why srt does not use kong)"},
	{"srt.dev/cmd/srt-init", []string{"net", "net/http", "crypto/tls", "encoding/json", "srt.dev/runtime/sandbox", "srt.dev/compiler/..."},
		"srt-init starts inside every sandbox: it links no network stack, TLS or JSON, nor the sandbox setup or the compiler (runtime/initstep)"},
}

// match reports whether an import path matches a pattern: the path itself,
// or with "/...", the path and every one below it.
func match(pattern, path string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == p || strings.HasPrefix(path, p+"/")
	}
	return path == pattern
}

// layerOf returns the layer of a package of the module and the index of
// the pattern that gives it, or -1.
func layerOf(path string) (layer, row int) {
	for i, l := range layers {
		if match(l.pattern, path) {
			return l.layer, i
		}
	}
	return 0, -1
}

// pkg is what go list says of a package.
type pkg struct {
	ImportPath string
	Imports    []string
	DepOnly    bool
}

// graph is the import graph of the module's packages and all they import,
// tests aside, as built for one system.
type graph struct {
	goos string
	pkgs map[string]*pkg
	own  []string // the module's packages, sorted
}

var (
	graphsOnce sync.Once
	graphsAll  []*graph
	graphsErr  error
)

// graphs returns the import graph for each of the systems.
func graphs(t *testing.T) []*graph {
	t.Helper()
	graphsOnce.Do(func() {
		if graphsErr = watchSources(); graphsErr != nil {
			return
		}
		for _, goos := range systems {
			g, err := load(goos)
			if err != nil {
				graphsErr = err
				return
			}
			graphsAll = append(graphsAll, g)
		}
	})
	if graphsErr != nil {
		t.Fatal(graphsErr)
	}
	return graphsAll
}

// watchSources reads the module's directories and stats its Go files and
// go.mod. go list reads them in another process, which go test's cache
// does not see: what this process opens and stats it does, so that a
// change to an import reruns the test instead of reusing its result.
func watchSources() error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") || d.Name() == "go.mod" {
			_, err = os.Stat(path)
		}
		return err
	})
}

// load runs go list for one system.
func load(goos string) (*graph, error) {
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Imports,DepOnly", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS="+goos)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, errors.New("GOOS=" + goos + " go list -deps -json ./...: " + err.Error() + "\n" + stderr.String())
	}
	g := &graph{goos: goos, pkgs: map[string]*pkg{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, err
		}
		g.pkgs[p.ImportPath] = &p
		if !p.DepOnly && strings.HasPrefix(p.ImportPath, "srt.dev/") {
			g.own = append(g.own, p.ImportPath)
		}
	}
	sort.Strings(g.own)
	if len(g.own) == 0 {
		return nil, errors.New("GOOS=" + goos + " go list found no package of the module")
	}
	return g, nil
}

// violations gathers what the graphs of the systems show, so that a rule
// broken on every system is said once, with the systems it is broken on.
type violations struct {
	order   []string
	systems map[string][]string
}

func (v *violations) add(goos, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if v.systems == nil {
		v.systems = map[string][]string{}
	}
	if _, ok := v.systems[msg]; !ok {
		v.order = append(v.order, msg)
	}
	v.systems[msg] = append(v.systems[msg], goos)
}

func (v *violations) report(t *testing.T) {
	t.Helper()
	for _, msg := range v.order {
		t.Errorf("%s (GOOS=%s)", msg, strings.Join(v.systems[msg], ","))
	}
}

// chain returns the shortest import chain from one package to the first
// that matches pattern, as "a -> b -> c", or "".
func (g *graph) chain(from, pattern string) string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if match(pattern, p) {
			var path []string
			for ; p != ""; p = prev[p] {
				path = append(path, p)
			}
			slices.Reverse(path)
			return strings.Join(path, " -> ")
		}
		if g.pkgs[p] == nil {
			continue
		}
		for _, imp := range g.pkgs[p].Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return ""
}

// pure returns the pure packages of the module, sorted.
func (g *graph) pure() []string {
	set := map[string]bool{}
	var visit func(string)
	visit = func(p string) {
		if set[p] || !strings.HasPrefix(p, "srt.dev/") {
			return
		}
		set[p] = true
		for _, imp := range g.pkgs[p].Imports {
			visit(imp)
		}
	}
	for _, p := range g.own {
		for _, r := range pureRoots {
			if match(r, p) {
				visit(p)
			}
		}
	}
	var out []string
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestPure: the pure packages import no package of runtime/ or cmd/ and
// touch the host only where pureExceptions says why.
func TestPure(t *testing.T) {
	var v violations
	used := make([]bool, len(pureExceptions))
	for _, g := range graphs(t) {
		pure := g.pure()
		if len(pure) == 0 {
			t.Fatalf("GOOS=%s: no pure package", g.goos)
		}
		for _, p := range pure {
			if match("srt.dev/runtime/...", p) || match("srt.dev/cmd/...", p) {
				v.add(g.goos, "%s is imported by a pure package: %s", p, chainFromPure(g, pure, p))
			}
			for _, imp := range g.pkgs[p].Imports {
				if !slices.Contains(hostImports, imp) {
					continue
				}
				i := slices.IndexFunc(pureExceptions, func(e exception) bool { return e.pkg == p && e.imp == imp })
				if i >= 0 {
					used[i] = true
					continue
				}
				v.add(g.goos, "the pure package %s imports %s: move the code to runtime/, or add the exception and its reason to pureExceptions", p, imp)
			}
		}
	}
	v.report(t)
	for i, e := range pureExceptions {
		if !used[i] {
			t.Errorf("pureExceptions: %s is not pure or does not import %s (%s): remove the exception", e.pkg, e.imp, e.why)
		}
	}
}

// chainFromPure names a pure root that imports p, and how.
func chainFromPure(g *graph, pure []string, p string) string {
	for _, from := range pure {
		if from == p {
			continue
		}
		for _, r := range pureRoots {
			if match(r, from) {
				if c := g.chain(from, p); c != "" {
					return c
				}
			}
		}
	}
	return p
}

// TestLayers: every package of the module has a layer and imports only
// from its own layer or below, and never what forbidden names; every
// pattern of the table gives some package its layer.
func TestLayers(t *testing.T) {
	var v violations
	usedLayer := make([]bool, len(layers))
	usedForbidden := make([]bool, len(forbidden))
	for _, g := range graphs(t) {
		for _, p := range g.own {
			lp, rp := layerOf(p)
			if rp < 0 {
				v.add(g.goos, "package %s has no layer: give it one in layers", p)
				continue
			}
			usedLayer[rp] = true
			for _, imp := range g.pkgs[p].Imports {
				if !strings.HasPrefix(imp, "srt.dev/") {
					continue
				}
				if li, ri := layerOf(imp); ri >= 0 && li > lp {
					v.add(g.goos, "%s (layer %d: %s) imports %s (layer %d: %s)", p, lp, layers[rp].what, imp, li, layers[ri].what)
				}
				for i, f := range forbidden {
					if match(f.from, p) {
						usedForbidden[i] = true
						if match(f.to, imp) {
							v.add(g.goos, "%s imports %s: %s", p, imp, f.why)
						}
					}
				}
			}
		}
	}
	v.report(t)
	for i, l := range layers {
		if !usedLayer[i] {
			t.Errorf("layers: no package is %s (%s): remove the pattern", l.pattern, l.what)
		}
	}
	for i, f := range forbidden {
		if !usedForbidden[i] {
			t.Errorf("forbidden: no package is %s: remove the rule", f.from)
		}
	}
}

// TestLean: the programs link none of the packages lean names.
func TestLean(t *testing.T) {
	var v violations
	for _, g := range graphs(t) {
		for _, l := range lean {
			if g.pkgs[l.program] == nil {
				v.add(g.goos, "no package %s", l.program)
				continue
			}
			for _, pattern := range l.links {
				if c := g.chain(l.program, pattern); c != "" {
					v.add(g.goos, "%s links %s (%s): %s", l.program, pattern, c, l.why)
				}
			}
		}
	}
	v.report(t)
}
