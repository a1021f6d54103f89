package schema

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestMutations replaces every value of a realistic settings file, one at a
// time, with values of every type and some tricky strings. Whatever the
// result, the grammar and its Go side must agree (no internal errors), and
// every diagnostic must name a path.
func TestMutations(t *testing.T) {
	data, err := os.ReadFile("testdata/typical.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	replacements := []any{nil, 3.0, 2.5, true, "", "x", "[::1", "*", "[a]:1", []any{}, map[string]any{}, []any{"*.com"}}
	loads := 0
	var visit func(v any, set func(any))
	visit = func(v any, set func(any)) {
		for _, r := range replacements {
			set(r)
			b, _ := json.Marshal(doc)
			_, diags := Load("m.json", b)
			loads++
			for _, d := range diags {
				if strings.HasPrefix(d.Message, "internal error") || strings.HasPrefix(d.Message, "the grammar rejects") || d.Path == nil {
					t.Errorf("%s\nin %s", d, b)
				}
			}
		}
		set(v)
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				visit(c, func(x any) { v[k] = x })
			}
		case []any:
			for i, c := range v {
				visit(c, func(x any) { v[i] = x })
			}
		}
	}
	root := doc.(map[string]any)
	for k, c := range root {
		visit(c, func(x any) { root[k] = x })
	}
	t.Logf("%d mutated documents", loads)
}
