package schema

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"github.com/google/go-cmp/cmp"
)

// TestGoTypesMatchGrammar checks that every object of the grammar and the Go
// type that holds it list the same keys, so the Go types can never drift
// from settings.cue.
func TestGoTypesMatchGrammar(t *testing.T) {
	g := grammarFor(OSPosix)
	grammarKeys := map[string][]string{}
	walkGrammar(g.settings, "", grammarKeys, 0)
	goKeys := map[string][]string{}
	walkGo(reflect.TypeFor[Settings](), "", goKeys)
	if diff := cmp.Diff(grammarKeys, goKeys); diff != "" {
		t.Errorf("keys per object (-grammar +Go):\n%s", diff)
	}
	if len(grammarKeys) < 15 {
		t.Errorf("found only %d objects in the grammar; the walk is broken", len(grammarKeys))
	}
}

func walkGrammar(s cue.Value, path string, out map[string][]string, depth int) {
	if depth > 10 || !s.Exists() {
		return
	}
	if st, ok := structBranch(s); ok {
		names, _ := fieldNames(st)
		if len(names) > 0 {
			out[path] = names
			for _, n := range names {
				walkGrammar(lookupField(st, n), path+"."+n, out, depth+1)
			}
		} else if v := st.LookupPath(cue.MakePath(cue.AnyString)); v.Exists() {
			walkGrammar(v, path+".*", out, depth+1)
		}
	}
	if s.IncompleteKind()&cue.ListKind != 0 {
		walkGrammar(s.LookupPath(cue.MakePath(cue.AnyIndex)), path+"[]", out, depth+1)
	}
}

func walkGo(t reflect.Type, path string, out map[string][]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() != reflect.Uint8 { // json.RawMessage is a value
			walkGo(t.Elem(), path+"[]", out)
		}
		return
	case reflect.Map:
		walkGo(t.Elem(), path+".*", out)
		return
	case reflect.Struct:
	default:
		return
	}
	if t == reflect.TypeFor[PathEntry]() {
		out[path] = []string{"literal", "path"} // its JSON form, see MarshalJSON
		return
	}
	var names []string
	var visit func(reflect.Type)
	visit = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if f.Anonymous {
				visit(f.Type)
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
			walkGo(f.Type, path+"."+name, out)
		}
	}
	visit(t)
	sort.Strings(names)
	out[path] = names
}
