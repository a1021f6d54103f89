package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/runtime/violations"
)

// TestLogTag is docs/reference.md#macos-cases M30 (commandId "build-42", suffix normalised to
// "_S_SBX") and the command-string case of docs/reference.md#macos-cases.
func TestLogTag(t *testing.T) {
	for _, tt := range []struct{ key, want string }{
		{"build-42", "CMD64_YnVpbGQtNDI=_END__S_SBX"},
		{"true", "CMD64_dHJ1ZQ==_END__S_SBX"},
		{strings.Repeat("é", 150), "CMD64_" + b64(strings.Repeat("é", 100)) + "_END__S_SBX"},
	} {
		if got := LogTag(tt.key, "_S_SBX"); got != tt.want {
			t.Errorf("LogTag(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	if s := sessionSuffix(1 << 63); !strings.HasPrefix(s, "_") || !strings.HasSuffix(s, "_SBX") || len(s) > 14 {
		t.Errorf("sessionSuffix = %q, want _<up to 9 base-36>_SBX", s)
	}
}

func b64(s string) string { return strings.TrimSuffix(LogTag(s, ""), "_END_")[len("CMD64_"):] }

func TestSeatbeltArgv(t *testing.T) {
	host := seatbelt.Host{Home: "/Users/u", Cwd: "/w/[x] proj", HTTPPort: 50001, SOCKSPort: 50002, LogTag: "CMD64_dHJ1ZQ==_END__S_SBX"}
	got, err := seatbeltArgv([]byte("(version 1)\n"), &policy.Policy{}, host, []string{"/bin/bash", "-c", "true"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{SandboxExec, "-p", "(version 1)\n",
		"-D", `CWD=/w/[x] proj`,
		"-D", `CWD_PARENTS_REGEX=^(/w)$`,
		"-D", `CWD_REGEX=/w/\[x\] proj`,
		"-D", "HOME=/Users/u",
		"-D", "HOME_PARENTS_REGEX=^(/Users)$",
		"-D", "HOME_REGEX=/Users/u",
		"-D", "HTTP_PROXY_PORT=50001",
		"-D", "LOG_TAG=CMD64_dHJ1ZQ==_END__S_SBX",
		"-D", "SOCKS_PROXY_PORT=50002",
		"/bin/bash", "-c", "true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seatbeltArgv (-want +got):\n%s", diff)
	}
	for _, bad := range [][]string{nil, {"-x"}} {
		if _, err := seatbeltArgv(nil, &policy.Policy{}, host, bad); err == nil {
			t.Errorf("seatbeltArgv(%q) accepted", bad)
		}
	}
	for _, h := range []seatbelt.Host{{Home: "rel", Cwd: "/w"}, {Home: "/h", Cwd: "/"}, {Home: "/", Cwd: "/w"}, {Home: "/h", Cwd: "/w/"}, {Home: "/h//u", Cwd: "/w"}, {Home: "/h", Cwd: ""}} {
		if _, err := seatbeltArgv(nil, &policy.Policy{}, h, []string{"true"}); err == nil {
			t.Errorf("HOME %q, CWD %q accepted", h.Home, h.Cwd)
		}
	}
	if got := (seatbelt.Host{Home: "/h", Cwd: "/"}).Defines(); !strings.Contains(strings.Join(got, " "), "CWD_PARENTS_REGEX=^$") {
		t.Errorf("Defines for CWD=/ = %q, want CWD_PARENTS_REGEX=^$ (matches no path)", got)
	}
}

// TestDarwinEnv covers docs/reference.md#macos-cases M31 (git safe directories) and M32 (the
// proxy variables with a token), and the credential variables.
func TestDarwinEnv(t *testing.T) {
	p := &policy.Policy{}
	p.Env.Unset = []policy.EnvRule{{Name: "GITHUB_TOKEN"}}
	p.Env.Mask = []policy.EnvRule{{Name: "NPM_TOKEN"}}
	p.Env.GitSafeDirectories = []string{"/repo/top"}
	base := []string{"PATH=/usr/bin", "GITHUB_TOKEN=secret", "NPM_TOKEN=secret2", "HTTP_PROXY=http://evil:1", "HOME=/Users/u"}
	proxy := proxyEnv("TOKEN", violations.Key("true"), "/usr/local/bin/srt", policy.ReferenceNoProxy, 60001, 60002)
	env := darwinEnv(base, p, proxy, func(n string) string { return "SENTINEL" })
	get := func(k string) (string, int) {
		n := 0
		v := ""
		for _, kv := range env {
			if name, val, _ := strings.Cut(kv, "="); name == k {
				n++
				v = val
			}
		}
		return v, n
	}
	for k, want := range map[string]string{
		"PATH": "/usr/bin", "NPM_TOKEN": "SENTINEL", "SANDBOX_RUNTIME": "1",
		"GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "/repo/top",
		"GIT_CONFIG_KEY_1": "safe.directory", "GIT_CONFIG_VALUE_1": "/repo/top/*", "GIT_CONFIG_COUNT": "2",
		"HTTP_PROXY":              "http://srt.dHJ1ZQ%3D%3D:TOKEN@localhost:60001",
		"GIT_CONFIG_PARAMETERS":   "'http.proxyAuthMethod=basic'",
		"CLOUDSDK_PROXY_USERNAME": "srt.dHJ1ZQ==",
		"FTP_PROXY":               "socks5h://srt.dHJ1ZQ%3D%3D:TOKEN@localhost:60002",
		"RSYNC_PROXY":             "localhost:60002",
		"ALL_PROXY":               "http://srt.dHJ1ZQ%3D%3D:TOKEN@localhost:60001",
	} {
		if got, n := get(k); got != want || n != 1 {
			t.Errorf("%s = %q (%d times), want %q once", k, got, n, want)
		}
	}
	if _, n := get("GITHUB_TOKEN"); n != 0 {
		t.Error("GITHUB_TOKEN (denied) reached the command")
	}
	if v, _ := get("GIT_SSH_COMMAND"); strings.Contains(v, "nc -X 5") || !strings.Contains(v, ConnectArg) {
		t.Errorf("GIT_SSH_COMMAND = %q, want srt itself as the ProxyCommand", v)
	}
	// An inherited count is continued; an inherited 0 turns the entries off.
	env = darwinEnv([]string{"GIT_CONFIG_COUNT=2"}, p, nil, func(string) string { return "S" })
	if v, _ := get("GIT_CONFIG_VALUE_2"); v != "/repo/top" {
		t.Errorf("with GIT_CONFIG_COUNT=2: GIT_CONFIG_VALUE_2 = %q, want /repo/top", v)
	}
	env = darwinEnv([]string{"GIT_CONFIG_COUNT=0"}, p, nil, func(string) string { return "S" })
	if _, n := get("GIT_CONFIG_KEY_0"); n != 0 {
		t.Error("GIT_CONFIG_COUNT=0 did not turn the safe.directory entries off")
	}
}

// TestReadSeatbeltLog: denials streamed from the log reach the store with
// their command, ignoreViolations applies, and the run hears of the kept
// ones. (The chunk format is the reference's, not read off a real Mac.)
func TestReadSeatbeltLog(t *testing.T) {
	p := &policy.Policy{IgnoreViolations: map[string][]string{"*": {"/private/var/db/noise"}}}
	m, err := NewManager(p, ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	key := violations.Key("cat secret")
	m.store.Register(key, "cat secret")
	tag := LogTag("cat secret", "_abc_SBX")
	chunks := "Sandbox: cat(7) deny(1) file-read-data /Users/u/.ssh/id_rsa\n" + tag + "\n" +
		"Sandbox: cat(7) deny(1) file-read-data /private/var/db/noise\n" + tag + "\n"
	var heard []string
	m.readSeatbeltLog(strings.NewReader(chunks), func(e violations.Entry) { heard = append(heard, e.Line) })
	got := m.Violations().For(key)
	if len(got) != 1 || got[0].Command != "cat secret" || !strings.HasSuffix(got[0].Line, "/Users/u/.ssh/id_rsa") || len(heard) != 1 {
		t.Errorf("stored %+v, heard %v", got, heard)
	}
	if args := LogStreamArgs("_abc_SBX"); strings.Join(args, " ") != `/usr/bin/log stream --predicate (eventMessage ENDSWITH "_abc_SBX") --style compact` {
		t.Errorf("%q", args)
	}
}

// TestSeatbeltExists: the existence facts of the profile's /private
// spellings, read from the real file system as the reference's realpath
// adopts a path: a directory or file that resolves to itself counts; a
// missing path, a symlink (to a directory, or dangling) and a path through
// a symlink do not.
func TestSeatbeltExists(t *testing.T) {
	for _, tt := range []struct {
		q, resolved string
		want        bool
	}{
		{"/tmp/x", "/private/tmp/x", true},
		{"/tmp/x", "/tmp/x", true},
		{"/tmp/a/../x", "/private/tmp/x", true},
		{"/tmp/x", "/private/tmp/y", false},
		{"/tmp/x", "/private/tmp/x/in", false},
		{"/tmp/x", "/Users/u/x", false},
	} {
		if got := adoptable(tt.q, tt.resolved); got != tt.want {
			t.Errorf("adoptable(%q, %q) = %v, want %v", tt.q, tt.resolved, got, tt.want)
		}
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, p)
	}
	real := mk("real")
	mk("real/sub")
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct{ name, to string }{{"link", real}, {"dangling", filepath.Join(dir, "none")}} {
		if err := os.Symlink(l.to, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		rel  string
		want bool
	}{
		{"real", true}, {"real/sub", true}, {"file", true}, {"real/../file", true},
		{"none", false}, {"link", false}, {"link/sub", false}, {"dangling", false}, {"file/x", false},
	} {
		if got := existsNow(filepath.Join(dir, tt.rel)); got != tt.want {
			t.Errorf("existsNow(%s) = %v, want %v", tt.rel, got, tt.want)
		}
	}
	// The facts asked are the profile's: two write roots and a read
	// allow's directory.
	p := &policy.Policy{}
	p.Filesystem.AllowWrite = []policy.PathRule{{Path: policy.MustParsePath("/tmp/srt-probe-none/x")}, {Path: policy.MustParsePath(real)}}
	p.Filesystem.AllowRead = []policy.PathRule{{Path: policy.MustParsePath("/var/srt-probe-none/y")}, {Path: policy.MustParsePath("${HOME}/real/../file")}, {Path: policy.MustParsePath("${HOME}/none/../file")}}
	got := seatbeltExists(p, seatbelt.Host{Home: dir, Cwd: "/w"})
	want := map[string]bool{"/tmp/srt-probe-none/x": false, "/var/srt-probe-none": false, "${HOME}/real/..": true, "${HOME}/none/..": false}
	if strings.HasPrefix(real, "/tmp/") || strings.HasPrefix(real, "/var/") {
		want[real] = true // the test's directory is under /tmp or /var (TMPDIR)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("seatbeltExists (-want +got):\n%s", diff)
	}
}
