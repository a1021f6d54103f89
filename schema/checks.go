package schema

import (
	"errors"
	"maps"
	"slices"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"

	"srt.dev/internal/ecmaregex"
	"srt.dev/internal/whatwg"
)

// facts are the values of #Facts in settings.cue: parse results that CUE
// cannot compute. They are keyed by the strings of the document, so Go needs
// no knowledge of where the rules use them, except which keys hold regular
// expressions and URLs.
type facts struct {
	URLHost     map[string]string    `json:"urlHost"`
	Regex       map[string]regexFact `json:"regex"`
	AbsoluteURL map[string]bool      `json:"absoluteURL"`
}

type regexFact struct {
	Captures *int   `json:"captures,omitempty"`
	Error    string `json:"error,omitempty"`
}

func collectFacts(n *node, key string, f *facts) {
	switch n.Kind {
	case kindString:
		s := n.Str
		if strings.HasPrefix(s, "[") {
			if i := strings.IndexByte(s, ']'); i >= 0 {
				inner := s[1:i]
				f.URLHost[inner] = whatwg.BracketHost(inner)
			}
		}
		switch key {
		case "extract":
			if c, err := ecmaregex.Check(s); err != nil {
				f.Regex[s] = regexFact{Error: err.Error()}
			} else {
				f.Regex[s] = regexFact{Captures: &c}
			}
		case "http", "https":
			f.AbsoluteURL[s] = whatwg.IsAbsoluteURL(s)
		}
	case kindArray:
		for _, e := range n.Elems {
			collectFacts(e, key, f)
		}
	case kindObject:
		for _, fl := range n.Fields {
			collectFacts(fl.Value, fl.Key, f)
		}
	}
}

// checks evaluates the rules of #Checks and records every violation.
// doc shows the first chunk of each long array; long holds them whole.
func (l *loader) checks(g *grammar, doc cue.Value, long map[string]longArray) {
	f := &facts{URLHost: map[string]string{}, Regex: map[string]regexFact{}, AbsoluteURL: map[string]bool{}}
	collectFacts(l.root, "", f)
	// Rendering a long array whole finds the long arrays nested in the
	// chunks after its first one.
	r := &renderer{l: l, skip: l.unknown, long: long}
	chunks := &ast.StructLit{}
	done := map[string]bool{}
	for len(done) < len(long) {
		for _, key := range slices.Sorted(maps.Keys(long)) {
			if !done[key] {
				done[key] = true
				a := long[key]
				chunks.Elts = append(chunks.Elts, &ast.Field{Label: ast.NewString(key), Value: r.chunks(a.n, a.path)})
			}
		}
	}
	in := g.ctx.Encode(map[string]any{"facts": f, "chunkSize": chunkSize}).
		FillPath(cue.ParsePath("doc"), doc).
		FillPath(cue.ParsePath("long"), g.ctx.BuildExpr(chunks))
	c := g.checks.Unify(in)
	// The coverage sets are filled with their texts, evaluated once (see
	// #coverSet).
	sets := map[string]any{}
	for _, k := range []string{"allow", "exclude"} {
		t := c.LookupPath(cue.MakePath(cue.Str("coverTexts"), cue.Str(k)))
		names, err1 := t.LookupPath(cue.ParsePath("names")).String()
		bases, err2 := t.LookupPath(cue.ParsePath("bases")).String()
		searchable, err3 := t.LookupPath(cue.ParsePath("searchable")).Bool()
		if err := errors.Join(err1, err2, err3); err != nil {
			// A type error where the coverage rules look; the grammar
			// reports it, and the rules that need the set yield nothing.
			l.ruleErrs = append(l.ruleErrs, err)
			continue
		}
		sets[k] = map[string]any{"names": names, "bases": bases, "searchable": searchable}
	}
	c = c.FillPath(cue.ParsePath("coverSets"), g.ctx.Encode(sets))
	it, err := c.LookupPath(cue.ParsePath("out")).Fields()
	if err != nil {
		l.ruleErrs = append(l.ruleErrs, err)
		return
	}
	for it.Next() {
		name, rule := it.Selector().Unquoted(), it.Value()
		list, err := rule.List()
		if err != nil {
			// The document has a type error where this rule looks; the
			// grammar reports it.
			l.ruleErrs = append(l.ruleErrs, err)
			continue
		}
		for list.Next() {
			l.violation(name, list.Value())
		}
	}
}

func (l *loader) violation(rule string, v cue.Value) {
	msg, err := v.LookupPath(cue.ParsePath("msg")).String()
	if err != nil {
		l.ruleErrs = append(l.ruleErrs, err)
		return
	}
	path := Path{}
	sels, err := v.LookupPath(cue.ParsePath("path")).List()
	if err != nil {
		l.ruleErrs = append(l.ruleErrs, err)
		return
	}
	for sels.Next() {
		s := sels.Value()
		if i, err := s.Int64(); err == nil {
			path = append(path, int(i))
		} else if str, err := s.String(); err == nil {
			path = append(path, str)
		}
	}
	path = l.docPath(path)
	l.addf(l.nearest(path), path, "%s", msg)
	l.diags[len(l.diags)-1].rule = rule
}
