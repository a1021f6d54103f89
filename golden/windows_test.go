package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler"
	"srt.dev/emit/artifact"
	"srt.dev/schema"
)

// TestGoldenWindows compiles windows/<case>/settings.json with the Windows
// path rules and compares windows/plan.json, or error.txt for a file the
// compiler or the emitter refuses, with the files beside it. The same
// -update flag (or SRT_UPDATE=1) rewrites them.
func TestGoldenWindows(t *testing.T) {
	cases, err := filepath.Glob("windows/*/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 25 {
		t.Fatalf("found %d Windows golden cases, want at least 25 (docs/reference.md#windows-cases)", len(cases))
	}
	rewrite := *update || os.Getenv("SRT_UPDATE") == "1"
	// The install phase is the same in most plans: it is kept once, in
	// windows/install-phase.json (the one of the default settings), and a
	// case's plan.json names it instead of repeating it, so that its diff
	// shows only what differs. The comparison is still of the whole plan.
	_, shared, ok := installPhase(compileWindows(t, installDefaults)["windows/plan.json"])
	if !ok {
		t.Fatalf("%s: no install phase in the plan", installDefaults)
	}
	const sharedFile = "windows/install-phase.json"
	if rewrite {
		if err := os.WriteFile(sharedFile, shared, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if want, err := os.ReadFile(sharedFile); err != nil {
		t.Errorf("no expected %s (go test ./golden/... -update writes it): %v", sharedFile, err)
	} else if !bytes.Equal(want, shared) {
		t.Errorf("%s differs from the install phase of %s (-golden +compiled):\n%s", sharedFile, installDefaults, cmp.Diff(strings.Split(string(want), "\n"), strings.Split(string(shared), "\n")))
	}
	for _, settings := range cases {
		dir := filepath.Dir(settings)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			files := compileWindows(t, settings)
			if plan, ok := files["windows/plan.json"]; ok {
				files["windows/plan.json"] = shareInstall(plan, shared)
			}
			check(t, dir, files, rewrite)
		})
	}
}

// installDefaults is the case whose install phase the others share.
const installDefaults = "windows/w01-install-defaults/settings.json"

// installRef stands for the shared install phase in a case's plan.json.
const installRef = "    {\n      \"name\": \"install\",\n      \"sameAs\": \"../../install-phase.json\"\n    }"

// installPhase finds the install phase in the text of a Windows plan: the
// object of the phases list whose name is install, from its opening brace
// to its closing one.
func installPhase(plan []byte) (start int, phase []byte, ok bool) {
	text := string(plan)
	i := strings.Index(text, "\n    {\n      \"name\": \"install\",\n")
	if i < 0 {
		return 0, nil, false
	}
	end := strings.Index(text[i+1:], "\n    }")
	if end < 0 {
		return 0, nil, false
	}
	return i + 1, []byte(text[i+1 : i+1+end+len("\n    }")]), true
}

// shareInstall replaces the install phase of plan by installRef where it is
// the shared one.
func shareInstall(plan, shared []byte) []byte {
	start, phase, ok := installPhase(plan)
	if !ok || !bytes.Equal(phase, shared) {
		return plan
	}
	out := append([]byte{}, plan[:start]...)
	out = append(out, installRef...)
	return append(out, plan[start+len(phase):]...)
}

// compileWindows returns what the Windows golden files of a case hold:
// windows/plan.json, or error.txt with the diagnostics or the error.
func compileWindows(t *testing.T, settings string) artifact.Files {
	t.Helper()
	data, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSWindows})
	if err != nil {
		t.Fatal(err)
	}
	if diags != nil {
		var b strings.Builder
		for _, d := range diags {
			b.WriteString(d.String() + "\n")
		}
		return artifact.Files{"error.txt": []byte(b.String())}
	}
	files, err := artifact.Build(p, []artifact.Target{artifact.Windows}, artifact.Options{})
	if err != nil {
		return artifact.Files{"error.txt": []byte(err.Error() + "\n")}
	}
	return artifact.Files{"windows/plan.json": files["windows/plan.json"]}
}
