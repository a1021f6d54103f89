package settingsgen

import (
	"bytes"
	"encoding/json"
	"testing"

	"srt.dev/schema"
)

// TestValid checks that generated files are valid settings, for the
// shapes the growth benchmark uses: every list small, and each list grown
// alone.
func TestValid(t *testing.T) {
	shapes := map[string]Sizes{"scale(64)": Scale(64), "scale(640)": Scale(640), "empty": {}}
	for _, l := range Lists {
		s := Scale(64)
		*l.Of(&s) *= 16
		shapes[l.Name+"x16"] = s
	}
	for name, s := range shapes {
		data := Generate(7, s)
		if _, diags := (schema.Options{OS: schema.OSPosix}).Load(name+".json", data); diags != nil {
			t.Errorf("%s: invalid:\n%v", name, diags)
		}
	}
}

// TestDeterministic checks that a seed and sizes give the same bytes, and
// another seed other bytes.
func TestDeterministic(t *testing.T) {
	a, b := Generate(1, Scale(200)), Generate(1, Scale(200))
	if !bytes.Equal(a, b) {
		t.Fatal("Generate(1, Scale(200)) differs between two calls")
	}
	if bytes.Equal(a, Generate(2, Scale(200))) {
		t.Fatal("seeds 1 and 2 give the same file")
	}
}

// TestSizes checks that each list has the number of entries asked for.
func TestSizes(t *testing.T) {
	s := Scale(640)
	var doc struct {
		Network struct {
			AllowedDomains []any `json:"allowedDomains"`
			DeniedDomains  []any `json:"deniedDomains"`
			MitmProxy      struct {
				Domains []any `json:"domains"`
			} `json:"mitmProxy"`
		} `json:"network"`
		Filesystem struct {
			DenyRead   []any `json:"denyRead"`
			AllowRead  []any `json:"allowRead"`
			AllowWrite []any `json:"allowWrite"`
			DenyWrite  []any `json:"denyWrite"`
		} `json:"filesystem"`
		Credentials struct {
			EnvVars []any `json:"envVars"`
			Files   []any `json:"files"`
		} `json:"credentials"`
	}
	if err := json.Unmarshal(Generate(3, s), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"allowedDomains", len(doc.Network.AllowedDomains), s.AllowedDomains},
		{"deniedDomains", len(doc.Network.DeniedDomains), s.DeniedDomains},
		{"mitmProxy.domains", len(doc.Network.MitmProxy.Domains), s.MitmDomains},
		{"denyRead", len(doc.Filesystem.DenyRead), s.DenyRead},
		{"allowRead", len(doc.Filesystem.AllowRead), s.AllowRead},
		{"allowWrite", len(doc.Filesystem.AllowWrite), s.AllowWrite},
		{"denyWrite", len(doc.Filesystem.DenyWrite), s.DenyWrite},
		{"envVars", len(doc.Credentials.EnvVars), s.EnvVars + 2*s.AwsPairs},
		{"files", len(doc.Credentials.Files), s.CredentialFiles},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d entries, want %d", c.name, c.got, c.want)
		}
	}
}

// TestFit checks that Fit returns the largest file within the bound.
func TestFit(t *testing.T) {
	const limit = 200 << 10
	n, data := Fit(5, Scale, limit)
	if n == 0 || len(data) > limit {
		t.Fatalf("Fit: n=%d, %d bytes, want n>0 and at most %d", n, len(data), limit)
	}
	if next := Generate(5, Scale(n+1)); len(next) <= limit {
		t.Errorf("Fit: n=%d, but n+1 gives %d bytes, within %d", n, len(next), limit)
	}
}
