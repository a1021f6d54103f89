package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// vocabulary lists the types whose switches must name every constant:
// the security vocabulary of a policy, a network decision's cause, and
// the seccomp architectures. Keys are "import/path.Type".
var vocabulary = []string{
	"srt.dev/compiler/policy.SeccompRule",
	"srt.dev/compiler/policy.NoMatchAction",
	"srt.dev/compiler/policy.Decoder",
	"srt.dev/compiler/policy.SigV4Mode",
	"srt.dev/compiler/policy/netpolicy.Cause",
	"srt.dev/emit/bwrap/seccomp.Arch",
}

// TestSwitchesNameEveryConstant reads every Go file of the module (tests
// and testdata aside) and finds each switch statement one of whose cases
// names a constant of a vocabulary type; such a switch must name every
// constant of that type, so that a new value cannot fall silently into a
// default branch. It reads syntax only: a switch that names none of the
// constants (one written with string literals) is not seen, which is why
// the vocabulary's code names its constants. Each type must have at least
// one switch, so that the test cannot pass by finding none.
func TestSwitchesNameEveryConstant(t *testing.T) {
	root, module := moduleRoot(t)
	files := parseModule(t, root, module)
	consts := map[string][]string{} // "path.Type" -> constant names, in order
	owner := map[string]string{}    // "path.Name" -> "path.Type"
	for _, f := range files {
		for typ, names := range typedConsts(f) {
			key := f.pkg + "." + typ
			if !slices.Contains(vocabulary, key) {
				continue
			}
			consts[key] = append(consts[key], names...)
			for _, n := range names {
				owner[f.pkg+"."+n] = key
			}
		}
	}
	for _, v := range vocabulary {
		if len(consts[v]) < 2 {
			t.Fatalf("found %d constants of %s: the test no longer reads the vocabulary", len(consts[v]), v)
		}
	}
	seen := map[string]int{}
	for _, f := range files {
		for _, m := range switchesIn(f, owner) {
			seen[m.typ]++
			var missing []string
			for _, c := range consts[m.typ] {
				if !m.named[c] {
					missing = append(missing, c)
				}
			}
			if len(missing) > 0 {
				t.Errorf("%s: a switch over %s does not name %s: add a case for each (a default branch is for values outside the vocabulary)", m.pos, m.typ, strings.Join(missing, ", "))
			}
		}
	}
	for _, v := range vocabulary {
		if seen[v] == 0 {
			t.Errorf("no switch over %s found: the test no longer sees them", v)
		}
	}
}

type goFile struct {
	pkg  string // import path
	name string // path relative to the module root, for messages
	fset *token.FileSet
	ast  *ast.File
}

// moduleRoot returns the directory holding go.mod and the module path.
func moduleRoot(t *testing.T) (string, string) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if m, ok := strings.CutPrefix(line, "module "); ok {
					return dir, strings.TrimSpace(m)
				}
			}
			t.Fatalf("%s/go.mod names no module", dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

func parseModule(t *testing.T, root, module string) []goFile {
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, goFile{pkg: path.Join(module, filepath.ToSlash(filepath.Dir(rel))), name: filepath.ToSlash(rel), fset: fset, ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// typedConsts returns the constants f declares with a named type of its
// own package, by type name; a spec without a type or values repeats the
// previous one's type, as iota lists do.
func typedConsts(f goFile) map[string][]string {
	out := map[string][]string{}
	for _, d := range f.ast.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		typ := ""
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			switch id, ok := vs.Type.(*ast.Ident); {
			case ok:
				typ = id.Name
			case vs.Type != nil || len(vs.Values) > 0:
				typ = ""
			}
			if typ == "" {
				continue
			}
			for _, n := range vs.Names {
				if n.Name != "_" {
					out[typ] = append(out[typ], n.Name)
				}
			}
		}
	}
	return out
}

// A vocabularySwitch is a switch statement that names a constant of a
// vocabulary type.
type vocabularySwitch struct {
	pos   string
	typ   string
	named map[string]bool // the constants of typ its cases name
}

// switchesIn finds the switches of f whose cases name a constant in
// owner ("path.Name" -> "path.Type"), one result per switch and type.
func switchesIn(f goFile, owner map[string]string) []vocabularySwitch {
	imports := map[string]string{} // local name -> import path
	for _, im := range f.ast.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		local := path.Base(p)
		if im.Name != nil {
			local = im.Name.Name
		}
		imports[local] = p
	}
	constOf := func(e ast.Expr) (typ, name string) {
		switch e := e.(type) {
		case *ast.Ident:
			return owner[f.pkg+"."+e.Name], e.Name
		case *ast.SelectorExpr:
			if x, ok := e.X.(*ast.Ident); ok && imports[x.Name] != "" {
				return owner[imports[x.Name]+"."+e.Sel.Name], e.Sel.Name
			}
		}
		return "", ""
	}
	var out []vocabularySwitch
	ast.Inspect(f.ast, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok || sw.Tag == nil {
			return true
		}
		byType := map[string]map[string]bool{}
		for _, s := range sw.Body.List {
			for _, e := range s.(*ast.CaseClause).List {
				if typ, name := constOf(e); typ != "" {
					if byType[typ] == nil {
						byType[typ] = map[string]bool{}
					}
					byType[typ][name] = true
				}
			}
		}
		pos := f.fset.Position(sw.Pos())
		for _, typ := range slices.Sorted(maps.Keys(byType)) {
			out = append(out, vocabularySwitch{pos: f.name + ":" + strconv.Itoa(pos.Line), typ: typ, named: byType[typ]})
		}
		return true
	})
	return out
}
