package schema

import (
	"encoding/json"
	"os"
	"testing"
)

type conformanceCase struct {
	ID       string          `json:"id"`
	Platform string          `json:"platform"`
	Input    json.RawMessage `json:"input"`
	Valid    bool            `json:"valid"`
	Why      string          `json:"why"`
}

func loadCases(t testing.TB) []conformanceCase {
	t.Helper()
	b, err := os.ReadFile("testdata/settings-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []conformanceCase `json:"cases"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// deliberate lists the cases where this project rejects what the reference
// accepts, and why (README.md, "Where we deliberately differ").
var deliberate = map[string]string{
	"U01": "unknown root key denyWriteTypo: the reference drops it silently; we reject it so a typo cannot drop a deny rule",
	"U02": "unknown key network.allowAllDomains: rejected for the same reason",
}

// TestConformance checks every verdict measured on the reference runtime.
func TestConformance(t *testing.T) {
	cases := loadCases(t)
	if len(cases) != 109 {
		t.Errorf("got %d cases, want the 109 of docs/reference.md#conformance-cases", len(cases))
	}
	agree := 0
	for _, c := range cases {
		t.Run(c.ID, func(t *testing.T) {
			os := OSPosix
			if c.Platform == "windows" {
				os = OSWindows
			}
			_, diags := Options{OS: os}.Load(c.ID+".json", c.Input)
			want := c.Valid
			if reason, ok := deliberate[c.ID]; ok {
				if !c.Valid {
					t.Fatalf("case %s is listed as a deliberate difference but the reference rejects it too", c.ID)
				}
				want = false
				t.Logf("deliberate difference: %s", reason)
			}
			if got := diags == nil; got != want {
				t.Errorf("Load(%s) valid = %v, want %v (%s)\ninput: %s\ndiagnostics:\n%v", c.ID, got, want, c.Why, c.Input, diags)
				return
			}
			if want == c.Valid {
				agree++
			}
			for _, d := range diags {
				t.Logf("%s", d)
			}
		})
	}
	t.Logf("%d of %d cases get the reference's verdict; %d differ deliberately", agree, len(cases), len(deliberate))
}
