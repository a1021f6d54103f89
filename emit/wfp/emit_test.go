package wfp_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/wfp"
	"srt.dev/schema"
)

// rich uses every part of the plan: grants, denies of each kind, globs,
// ranking, credentials, TLS termination, open loopback, git directories.
const rich = `{
 "network": {"allowedDomains": ["github.com"], "deniedDomains": [], "allowLocalBinding": true, "tlsTerminate": {}},
 "filesystem": {
  "denyRead": ["~\\.ssh", "C:\\p\\**\\*.pem", "\\\\srv\\share\\secret"],
  "allowRead": ["C:\\tools", "C:\\u\\.aws\\cfg"],
  "allowWrite": ["C:\\p", "C:\\p\\vendor\\x", "C:\\out-*"],
  "denyWrite": ["C:\\p\\vendor\\"]},
 "credentials": {"files": [{"path": "C:\\u\\.aws", "mode": "deny"}, {"path": "~\\.npmrc", "mode": "mask"}],
  "envVars": [{"name": "GITHUB_TOKEN", "mode": "deny"}, {"name": "NPM_TOKEN", "mode": "mask"}],
  "allowPlaintextInject": true},
 "git": {"safeDirectories": ["D:\\repo"]},
 "windows": {"sandboxUser": "sbx", "proxyPortRange": [55080, 55089], "srtWin": {"path": "C:\\srt\\srt-win.exe"}}
}`

func compile(t *testing.T, src string) *policy.Policy {
	t.Helper()
	p, diags, err := compiler.CompileFile("s.json", []byte(src), schema.Options{OS: schema.OSWindows})
	if err != nil || diags != nil {
		t.Fatalf("compile: %v %v", err, diags)
	}
	return p
}

// TestRoundTrip: the plan's Go types read back what they write, to the
// byte.
func TestRoundTrip(t *testing.T) {
	pl, err := wfp.Emit(compile(t, rich))
	if err != nil {
		t.Fatal(err)
	}
	b, err := wfp.Render(pl)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var back wfp.Plan
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pl, &back); diff != "" {
		t.Errorf("plan after a JSON round trip (-emitted +read):\n%s", diff)
	}
	again, err := wfp.Render(&back)
	if err != nil || !bytes.Equal(again, b) {
		t.Errorf("rendering the plan read back gives other bytes (%v)", err)
	}
	// Every operation says what caused it.
	for _, ph := range pl.Phases {
		for _, op := range ph.Operations {
			if len(op.CausedBy) == 0 || op.Purpose == "" {
				t.Errorf("%s: %s has no causedBy or no purpose", ph.Name, op.Op)
			}
		}
	}
}

// TestDeterministic: the same policy gives the same bytes.
func TestDeterministic(t *testing.T) {
	p := compile(t, rich)
	a, err := wfp.Bytes(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		b, _ := wfp.Bytes(compile(t, rich))
		if !bytes.Equal(a, b) {
			t.Fatal("two emits of the same settings differ")
		}
	}
}

func TestEmitRefuses(t *testing.T) {
	posix, _, err := compiler.CompileFile("s.json", []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), schema.Options{OS: schema.OSPosix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wfp.Emit(posix); err == nil || !strings.Contains(err.Error(), "POSIX path rules") {
		t.Errorf("Emit(POSIX reading) = %v, want a refusal", err)
	}
	for _, tt := range []struct{ name, src, want string }{
		{"mxc", `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "windows": {"backend": "mxc"}}`,
			`s.json:1:148: windows.backend: "mxc": srtc emits plans for the srt-win backend only`},
		{"external port outside the range", `{"network": {"allowedDomains": [], "deniedDomains": [], "httpProxyPort": 3128}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`,
			"network.httpProxyPort 3128 lies outside windows.proxyPortRange [60080, 60089]"},
		{"command line too long", longRoots(), "argv_too_long: the helper's command line would be about 3"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wfp.Emit(compile(t, tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Emit = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// longRoots has write roots whose --write-root arguments alone pass the
// command-line limit (docs/reference.md#windows-cases W23).
func longRoots() string {
	var roots []string
	for i := 0; i < 130; i++ {
		roots = append(roots, `"C:\\`+strings.Repeat("d", 200)+`\\`+string(rune('a'+i%26))+strings.Repeat("x", i/26)+`"`)
	}
	return `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [` + strings.Join(roots, ",") + `], "denyWrite": []}}`
}

// BenchmarkEmit measures Emit and Render of the rich settings.
func BenchmarkEmit(b *testing.B) {
	p, _, err := compiler.CompileFile("s.json", []byte(rich), schema.Options{OS: schema.OSWindows})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := wfp.Bytes(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDenyUnderDriveRootLifetime: a pattern deny directly under a drive
// root lies under a write root of the whole drive, and is kept with it,
// as one deeper down is (its static prefix is C:\, not "C:").
func TestDenyUnderDriveRootLifetime(t *testing.T) {
	pl, err := wfp.Emit(compile(t, `{
 "network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": ["C:\\*.pem", "C:\\keys\\*.pem"], "allowRead": [], "allowWrite": ["C:\\"], "denyWrite": []}
}`))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, ph := range pl.Phases {
		for _, op := range ph.Operations {
			if op.ACE == nil || op.ACE.Type != "DENY" || !strings.Contains(op.ACE.Path, ".pem") {
				continue
			}
			found++
			if want := `kept with the write root C:\ (until srt-win acl forget or uninstall)`; op.ACE.Lifetime != want {
				t.Errorf("deny on %s: lifetime %q, want %q", op.ACE.Path, op.ACE.Lifetime, want)
			}
		}
	}
	if found != 2 {
		t.Fatalf("found %d deny ACEs on the patterns, want 2", found)
	}
}
