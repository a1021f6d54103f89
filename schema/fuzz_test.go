package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// FuzzLoad feeds Load arbitrary bytes, seeded with the conformance cases.
// Load must never panic, every diagnostic must point inside the file, the
// plain checks must change nothing, and a file Load accepts must survive a
// round trip through the Go types.
func FuzzLoad(f *testing.F) {
	b, err := os.ReadFile("testdata/settings-cases.json")
	if err != nil {
		f.Fatal(err)
	}
	var file struct {
		Cases []struct {
			Input json.RawMessage `json:"input"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		f.Fatal(err)
	}
	for _, c := range file.Cases {
		f.Add([]byte(c.Input))
	}
	for _, s := range []string{"", "\ufeff{}", `{"a":1,"a":2}`, `[[[[`, `{"network":{"allowedDomains":["[a]b.c","[::1]:443"]}}`, "{\"x\":\"\xff\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, diags := Load("f.json", data)
		if (s == nil) == (diags == nil) {
			t.Fatalf("Load returned settings %v and diagnostics %v", s, diags)
		}
		// The plain checks (fastpath.go) must not change a diagnostic.
		if _, slow := (Options{slow: true}).Load("f.json", data); fmt.Sprint(slow) != fmt.Sprint(diags) {
			t.Errorf("Load(%q) with plain checks:\n%v\nwithout:\n%v", data, diags, slow)
		}
		for _, d := range diags {
			if d.File != "f.json" || d.Message == "" || d.off > len(data) || d.Line < 0 || (d.Line == 0 && d.off >= 0) {
				t.Errorf("bad diagnostic %+v", d)
			}
			// These mean the grammar and its Go side disagree: a bug.
			if strings.HasPrefix(d.Message, "internal error") || strings.HasPrefix(d.Message, "the grammar rejects this file") {
				t.Errorf("Load(%q): %s", data, d)
			}
		}
		if s == nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal accepted settings: %v", err)
		}
		if _, diags := Load("roundtrip.json", out); diags != nil {
			t.Errorf("accepted %q, but not its round trip %s: %v", data, out, diags)
		}
	})
}

// BenchmarkLoad measures validating a typical project settings file: a few
// domains, paths and a masked credential.
func BenchmarkLoad(b *testing.B) {
	data, err := os.ReadFile("testdata/typical.json")
	if err != nil {
		b.Fatal(err)
	}
	if _, diags := Load("typical.json", data); diags != nil {
		b.Fatal(diags)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		Load("typical.json", data)
	}
}

// BenchmarkDecodeJSON is the floor BenchmarkLoad compares with: decoding the
// same file with encoding/json into the same Go types, checking nothing.
func BenchmarkDecodeJSON(b *testing.B) {
	data, err := os.ReadFile("testdata/typical.json")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var s Settings
		if err := json.Unmarshal(data, &s); err != nil {
			b.Fatal(err)
		}
	}
}
