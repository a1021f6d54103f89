package resolve

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/emit/bwrap"
)

// TestLandlock: the second layer grants what the mounts make writable
// (the write roots as the sandbox sees them, the run's TMPDIR at its place
// inside, not its directory on the host) and the plan's grants, nothing
// else: not a write root that does not exist, which is not bound either.
func TestLandlock(t *testing.T) {
	home, cwd := project(t)
	other := filepath.Join(home, "other")
	res := resolveFor(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": [".", "~/absent", "~/other"], "denyWrite": ["./secrets"]}}`, home, cwd)
	if res.Landlock == nil {
		t.Fatal("no second layer")
	}
	want := []string{cwd, other, "/tmp/claude", "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts", "/dev/shm"}
	if diff := cmp.Diff(want, res.Landlock.Write); diff != "" {
		t.Errorf("Landlock.Write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"abstract-unix-socket", "signal"}, res.Landlock.Scopes); diff != "" {
		t.Errorf("Landlock.Scopes (-want +got):\n%s", diff)
	}
	if res.Landlock.Line != 0 {
		t.Errorf("a plan made in memory has no lines; got %d", res.Landlock.Line)
	}
	// The file system policy disabled: no second layer.
	res = resolveFor(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"disabled": true, "denyRead": [], "allowWrite": [], "denyWrite": []}}`, home, cwd)
	if res.Landlock != nil {
		t.Errorf("disabled file system: second layer %+v", res.Landlock)
	}
}

// TestLandlockStep: what a plan's @landlock line may say.
func TestLandlockStep(t *testing.T) {
	home, cwd := project(t)
	for _, tc := range []struct{ operand, err string }{
		{"grant=/dev/null scope=signal", ""},
		{"grant= scope=", ""},
		{"grant=dev/null", `grant "dev/null" is not a clean absolute path`},
		{"grant=/dev/../etc", `grant "/dev/../etc" is not a clean absolute path`},
		{"scope=network", `unknown scope "network"`},
		{"deny=/etc", `unknown parameter "deny=/etc"`},
	} {
		steps := []bwrap.Step{{Args: []string{"--ro-bind", "/", "/"}}, {Directive: bwrap.Landlock, Operand: tc.operand, Params: true, Line: 7}}
		res, err := Resolve(steps, Host{Home: home, Cwd: cwd})
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("@landlock %s: %v", tc.operand, err)
		case tc.err == "" && res.Landlock.Line != 7:
			t.Errorf("@landlock %s: line %d, want 7", tc.operand, res.Landlock.Line)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "line 7: ")):
			t.Errorf("@landlock %s: error %v, want line 7: ...%s", tc.operand, err, tc.err)
		}
	}
}
