package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"srt.dev/schema/builtin"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/token"
)

// Source is the CUE text of the settings grammar.
//
//go:embed settings.cue
var Source string

// OS selects the operating-system-dependent rules of the grammar: what
// counts as an absolute binary path, and the inert-deny-glob rule.
type OS string

// The operating-system rule sets.
const (
	OSPosix   OS = "posix"
	OSWindows OS = "windows"
)

// HostOS is the rule set of the operating system this program runs on.
func HostOS() OS {
	if runtime.GOOS == "windows" {
		return OSWindows
	}
	return OSPosix
}

// Options adjust Load. The zero value validates for the host OS.
type Options struct {
	// OS selects the rule set; "" means HostOS().
	OS OS
	// slow shows the grammar every element (tests compare both ways).
	slow bool
}

// Load parses and validates one settings file. name is used in diagnostics
// only. It returns the settings when the file is valid; otherwise every
// problem found, in file order, and nil settings. Load never panics on any
// input and takes time linear in the size of data, which is at most
// MaxFileSize.
func Load(name string, data []byte) (*Settings, Diagnostics) {
	return Options{}.Load(name, data)
}

// Load is Load with o's options.
func (o Options) Load(name string, data []byte) (*Settings, Diagnostics) {
	os := o.OS
	if os == "" {
		os = HostOS()
	}
	if len(data) > MaxFileSize {
		return nil, TooLarge(name, int64(len(data)))
	}
	l := &loader{file: name, data: data, slow: o.slow}
	root, err := parseJSON(data)
	if err != nil {
		se := err.(*syntaxError)
		l.addf(se.off, nil, "invalid JSON: %s", se.msg)
		return nil, l.diags
	}
	if root.Kind != kindObject {
		l.addf(root.Off, Path{}, "the settings file must hold a JSON object, not %s: start it with {", article(root.Kind))
		return nil, l.diags
	}
	l.root = root

	g := grammarFor(os)
	l.g = g
	g.mu.Lock()
	defer g.mu.Unlock()
	// Unknown keys are reported here and left out of what CUE sees: a
	// closedness error would hide CUE's other errors.
	l.unknown = map[*node]bool{}
	l.unknownKeys(root, g.settings, Path{})
	l.views = l.plainViews()
	// The grammar sees every array in chunks of at most chunkSize
	// elements: pass p shows chunk p of each long array.
	var (
		findings []cueFinding
		firstErr error
		doc      cue.Value
		long     map[string]longArray
	)
	for pass := range l.passes(root) {
		r := &renderer{l: l, skip: l.unknown, pass: pass}
		if pass == 0 {
			r.long = map[string]longArray{}
		}
		d := g.ctx.BuildExpr(r.expr(root, Path{}))
		if pass == 0 {
			doc, long = d, r.long
		}
		if err := g.settings.Unify(d).Validate(cue.Concrete(true), cue.All()); err != nil {
			findings = append(findings, l.cueFindings(err, pass)...)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	l.cueErrors(findings, firstErr, g.settings)
	l.checks(g, doc, long)
	if len(l.diags) == 0 && len(l.ruleErrs) > 0 {
		// A rule could not be evaluated on a document the grammar accepts:
		// a bug in settings.cue. Refuse rather than skip the rule.
		l.addf(0, Path{}, "internal error: a settings rule could not be checked: %v", l.ruleErrs[0])
	}
	if len(l.diags) > 0 {
		l.diags.sort()
		return nil, l.diags
	}
	s, err := decodeSettings(root)
	if err != nil {
		// The grammar accepted something the Go types cannot hold: a bug
		// in this package, reported rather than hidden.
		l.addf(0, Path{}, "internal error: valid settings do not decode: %v", err)
		return nil, l.diags
	}
	if l.lines == nil {
		l.lines = newlineOffsets(data)
	}
	s.src = &source{file: name, root: root, lines: l.lines}
	return s, nil
}

// TooLarge is the diagnostic for a file of size bytes, larger than
// MaxFileSize; a caller that reads files can use it without reading all of
// a huge one.
func TooLarge(name string, size int64) Diagnostics {
	return Diagnostics{{File: name, off: -1, Message: builtin.TooLarge(size)}}
}

// grammar is the compiled CUE for one OS. CUE values are not safe for
// concurrent evaluation, hence mu.
type grammar struct {
	mu       sync.Mutex
	ctx      *cue.Context
	file     cue.Value
	settings cue.Value
	checks   cue.Value
	structs  map[string]*structInfo // by path; see structAt
	fast     fastRegexps
}

var grammars sync.Map // OS -> func() *grammar

func grammarFor(os OS) *grammar {
	f, _ := grammars.LoadOrStore(os, sync.OnceValue(func() *grammar { return compileGrammar(os) }))
	return f.(func() *grammar)()
}

func compileGrammar(os OS) *grammar {
	ctx := cuecontext.New()
	src := Source + fmt.Sprintf("\n#os: %q\n", os)
	file := ctx.CompileString(src, cue.Filename("settings.cue"))
	if err := file.Err(); err != nil {
		panic("schema: settings.cue does not compile: " + cueerrors.Details(err, nil))
	}
	return &grammar{
		ctx:      ctx,
		file:     file,
		settings: file.LookupPath(cue.ParsePath("#Settings")),
		checks:   file.LookupPath(cue.ParsePath("#Checks")),
		structs:  map[string]*structInfo{},
		fast:     compileFast(file, os),
	}
}

type loader struct {
	g     *grammar
	file  string
	data  []byte
	root  *node
	diags Diagnostics
	lines []int // offsets of '\n', built on first use
	// unknown holds the values of keys the grammar does not define.
	unknown map[*node]bool
	// missing is set when a required key is missing.
	missing bool
	// ruleErrs are rules of #Checks that could not be evaluated.
	ruleErrs []error
	// views holds the elements the grammar is shown of the long lists
	// with a plain check (see plainViews); other arrays are shown whole.
	views map[*node][]int
	slow  bool
}

// addf records a diagnostic at byte offset off (-1: the whole file).
func (l *loader) addf(off int, path Path, format string, args ...any) {
	d := Diagnostic{File: l.file, Path: path, Message: fmt.Sprintf(format, args...), off: off}
	if off >= 0 {
		d.Line, d.Col = l.position(off)
	}
	l.diags = append(l.diags, d)
}

func (l *loader) position(off int) (line, col int) {
	if l.lines == nil {
		l.lines = newlineOffsets(l.data)
	}
	return lineCol(l.lines, off)
}

// newlineOffsets lists the offsets of the newlines in data.
func newlineOffsets(data []byte) []int {
	lines := []int{}
	for i, c := range data {
		if c == '\n' {
			lines = append(lines, i)
		}
	}
	return lines
}

// lineCol converts a byte offset to a 1-based line and byte column.
func lineCol(lines []int, off int) (line, col int) {
	lo, hi := 0, len(lines) // count the newlines before off
	for lo < hi {
		m := (lo + hi) / 2
		if lines[m] < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	start := 0
	if lo > 0 {
		start = lines[lo-1] + 1
	}
	return lo + 1, off - start + 1
}

// chunkSize is the longest list the grammar is shown at once. CUE finds a
// list element by a linear search of the elements before it, so the time to
// evaluate a list grows with the square of its length: 180,000 entries took
// minutes. A longer array is shown chunkSize elements at a time, which keeps
// the whole load linear in the size of the file.
var chunkSize = 1000 // a variable so that tests can make chunks small

// passes is the number of evaluations of the grammar that show every
// shown element of the longest array of the document once.
func (l *loader) passes(n *node) int {
	p := 1
	switch n.Kind {
	case kindArray:
		p = max(p, (l.shown(n)+chunkSize-1)/chunkSize)
		for _, e := range n.Elems {
			if e.Kind == kindArray || e.Kind == kindObject {
				p = max(p, l.passes(e))
			}
		}
	case kindObject:
		for _, f := range n.Fields {
			p = max(p, l.passes(f.Value))
		}
	}
	return p
}

// chunkStart is the index of the first element that pass shows of an array
// of n elements. A long array with fewer chunks than passes shows its first
// chunk again (its errors are reported once); a short one is shown whole.
func chunkStart(n, pass int) int {
	if n <= chunkSize || pass*chunkSize >= n {
		return 0
	}
	return pass * chunkSize
}

// A renderer converts a parsed document to CUE syntax for one pass, leaving
// out the values in skip. Numbers that JavaScript considers integers (3,
// 3.0, 1e1) become CUE integers, so that the grammar's int constraints
// decide integers by value as the reference does.
type renderer struct {
	l    *loader // the shown elements of each array
	skip map[*node]bool
	pass int
	// long, when not nil, receives every array longer than chunkSize, by
	// its path as Path.String writes it.
	long map[string]longArray
}

// A longArray is an array longer than chunkSize, and where it is.
type longArray struct {
	path Path
	n    *node
}

func (r *renderer) expr(n *node, path Path) ast.Expr {
	switch n.Kind {
	case kindNull:
		return ast.NewNull()
	case kindBool:
		return ast.NewBool(n.Bool)
	case kindNumber:
		var lit *ast.BasicLit
		if n.integral() {
			lit = &ast.BasicLit{Kind: token.INT, Value: strconv.FormatFloat(abs(n.Num), 'f', -1, 64)}
		} else {
			lit = &ast.BasicLit{Kind: token.FLOAT, Value: strings.TrimPrefix(n.Str, "-")}
		}
		if strings.HasPrefix(n.Str, "-") && n.Num != 0 {
			return &ast.UnaryExpr{Op: token.SUB, X: lit}
		}
		return lit
	case kindString:
		return ast.NewString(n.Str)
	case kindArray:
		count := r.l.shown(n)
		start := chunkStart(count, r.pass)
		if count > chunkSize && r.long != nil {
			r.long[path.String()] = longArray{path, n}
		}
		out := make([]ast.Expr, 0, min(count-start, chunkSize))
		for k := start; k < min(count, start+chunkSize); k++ {
			i := r.l.index(n, k)
			out = append(out, r.expr(n.Elems[i], path.child(i)))
		}
		return ast.NewList(out...)
	default:
		s := &ast.StructLit{}
		for _, f := range n.Fields {
			if r.skip[f.Value] {
				continue
			}
			s.Elts = append(s.Elts, &ast.Field{Label: ast.NewString(f.Key), Value: r.expr(f.Value, path.child(f.Key))})
		}
		return s
	}
}

// chunks renders the whole of a long array as a list of chunks.
func (r *renderer) chunks(n *node, path Path) ast.Expr {
	var out []ast.Expr
	count := r.l.shown(n)
	for start := 0; start < count; start += chunkSize {
		chunk := make([]ast.Expr, 0, min(count-start, chunkSize))
		for k := start; k < min(count, start+chunkSize); k++ {
			i := r.l.index(n, k)
			chunk = append(chunk, r.expr(n.Elems[i], path.child(i)))
		}
		out = append(out, ast.NewList(chunk...))
	}
	return ast.NewList(out...)
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func article(k kind) string {
	switch k {
	case kindArray, kindObject:
		return "an " + k.String()
	case kindNull:
		return "null"
	}
	return "a " + k.String()
}

// jsonString quotes s as JSON does, without escaping <, > and &.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// describe renders a scalar value for a message: "got ..." text.
func describe(n *node) string {
	switch n.Kind {
	case kindString:
		s := n.Str
		if r := []rune(s); len(r) > 60 {
			s = string(r[:57]) + "..."
		}
		return jsonString(s)
	case kindNumber:
		return n.Str
	case kindBool:
		return strconv.FormatBool(n.Bool)
	case kindNull:
		return "null"
	}
	return article(n.Kind)
}
