package artifact

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/internal/testenv"
	"srt.dev/schema"
)

// TestRead: the runtime gets the bytes that were checked, and no
// file the plan does not list (a profile dropped into a linux-only plan
// is not run).
func TestRead(t *testing.T) {
	p, diags, err := compiler.CompileFile("s.json", []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": [], "denyWrite": []}}`), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	files, err := Build(p, []Target{Linux}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for n, b := range files {
		testenv.MkdirAll(t, filepath.Dir(filepath.Join(dir, n)), 0o755)
		testenv.WriteFile(t, filepath.Join(dir, n), b, 0o644)
	}
	testenv.MkdirAll(t, filepath.Join(dir, "macos"), 0o755)
	testenv.WriteFile(t, filepath.Join(dir, "macos", "profile.sb"), []byte("(version 1)\n(allow default)\n"), 0o644)
	_, got, err := Read(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["macos/profile.sb"]; ok {
		t.Error("a file the plan does not list was returned")
	}
	if string(got["linux/bwrap.args"]) != string(files["linux/bwrap.args"]) || len(got) != len(files)-1 {
		t.Errorf("got %v, want the %d listed files", got.Names(), len(files)-1)
	}
}

// TestReadOutside: a manifest that names a file outside the directory is
// refused before anything is read from there.
func TestReadOutside(t *testing.T) {
	fsys := fstest.MapFS{
		"plan.json": {Data: []byte(`{"formatVersion": ` + strconv.Itoa(policy.FormatVersion) + `, "files": {"../secret": "00"}}`)},
	}
	if _, _, err := Read(fsys, "plan"); err == nil || !strings.Contains(err.Error(), `lists "../secret", which is not a file of the directory`) {
		t.Errorf("Read = %v, want a refusal of ../secret", err)
	}
}

// TestReadFormat1: a plan of format 1, whose host patterns are strings,
// is refused with the format and what to do, not with the JSON error its
// strings cause in this format; a plan of this format with strings there
// is refused with the JSON error.
func TestReadFormat1(t *testing.T) {
	const plan = `{"formatVersion": %s, "network": {"allowed": [], "denied": [], "tls": {"excludeDomains": ["pinned.example.com"], "origin": {"key": "network.tlsTerminate"}}}, "files": {}}`
	fsys := fstest.MapFS{"plan.json": {Data: []byte(strings.Replace(plan, "%s", "1", 1))}}
	want := "plan/plan.json: plan format 1, and this srt reads format " + strconv.Itoa(policy.FormatVersion) + " only: compile it again"
	if _, _, err := Read(fsys, "plan"); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Read(format 1) = %v, want %q", err, want)
	}
	fsys = fstest.MapFS{"plan.json": {Data: []byte(strings.Replace(plan, "%s", strconv.Itoa(policy.FormatVersion), 1))}}
	want = "plan/plan.json: json: cannot unmarshal string into Go struct field"
	if _, _, err := Read(fsys, "plan"); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Read(strings in format %d) = %v, want %q", policy.FormatVersion, err, want)
	}
}

// TestReadMalformedPath: plan.json is read from disk, so a rule's path
// that no normaliser writes is refused with the path, not guessed at.
func TestReadMalformedPath(t *testing.T) {
	const plan = `{"formatVersion": %v, "filesystem": {"denyRead": [{"path": %q, "origin": {"key": "filesystem.denyRead[0]"}}], "allowRead": [], "allowWrite": [], "denyWrite": []}, "files": {}}`
	for _, tt := range []struct{ path, want string }{
		{".ssh", `policy path ".ssh" starts at no root`},
		{"${HOME}.ssh", `policy path "${HOME}.ssh": the root ${HOME} must be followed by "/"`},
		{"${HOME}//.ssh", `policy path "${HOME}//.ssh": an empty element`},
		{"/etc/./x", `policy path "/etc/./x": a "." element`},
		{"/etc/x/", `policy path "/etc/x/": an empty element`},
		{"", "empty policy path"},
	} {
		fsys := fstest.MapFS{"plan.json": {Data: []byte(fmt.Sprintf(plan, policy.FormatVersion, tt.path))}}
		if _, _, err := Read(fsys, "plan"); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Read(path %q) = %v, want an error containing %q", tt.path, err, tt.want)
		}
	}
}
