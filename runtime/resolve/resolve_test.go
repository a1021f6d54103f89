package resolve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/emit/bwrap"
	"srt.dev/internal/testenv"
	"srt.dev/schema"
)

// project makes a home directory and a project in it:
//
//	home/.ssh/id_rsa
//	home/proj/{.git/{HEAD,config,hooks/},src/main.go,.env,secrets/key,a/b/.bashrc,a/b/c/.profile,
//	           sub/.git/HEAD, sub/deeper/.git/HEAD, link-out -> home/outside.txt}
//	home/outside.txt, home/other/
func project(t *testing.T) (home, cwd string) {
	t.Helper()
	root := t.TempDir()
	home = filepath.Join(root, "home")
	cwd = filepath.Join(home, "proj")
	for _, d := range []string{".ssh", "proj/.git/hooks", "proj/src", "proj/secrets", "proj/a/b/c", "proj/sub/.git", "proj/sub/deeper/.git", "other"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".ssh/id_rsa", "proj/.git/HEAD", "proj/.git/config", "proj/src/main.go", "proj/.env", "proj/secrets/key", "proj/a/b/.bashrc", "proj/a/b/c/.profile", "proj/sub/.git/HEAD", "proj/sub/deeper/.git/HEAD", "outside.txt", "proj/.env.example"} {
		if err := os.WriteFile(filepath.Join(home, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, "outside.txt"), filepath.Join(cwd, "link-out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "other"), filepath.Join(cwd, "other-link")); err != nil {
		t.Fatal(err)
	}
	return home, cwd
}

// plan compiles settings text into plan steps.
func plan(t *testing.T, settings string) []bwrap.Step {
	t.Helper()
	p, diags, err := compiler.CompileFile("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatalf("compile: %v %v", err, diags)
	}
	return bwrap.Emit(p).Steps
}

func resolveFor(t *testing.T, settings, home, cwd string) *Result {
	t.Helper()
	return resolveWith(t, settings, home, cwd, t.TempDir())
}

func resolveWith(t *testing.T, settings, home, cwd, empty string) *Result {
	t.Helper()
	res, err := Resolve(plan(t, settings), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), EmptyDir: empty, SeccompFD: 3, MaskValue: func(string) (string, bool) { return "sentinel", true }})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestResolveArgs(t *testing.T) {
	home, cwd := project(t)
	empty := t.TempDir()
	res := resolveWith(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["~/.ssh", "**/.env"], "allowRead": ["./.env.example"], "allowWrite": ["."], "denyWrite": ["./secrets"]}}`, home, cwd, empty)
	args := strings.Join(res.Args, " ")
	for _, want := range []string{
		"--ro-bind / /",
		"--bind " + cwd + " " + cwd,
		"--tmpfs " + home + "/.ssh",
		"--ro-bind /dev/null " + cwd + "/.env",
		"--ro-bind " + cwd + "/secrets " + cwd + "/secrets",
		"--ro-bind " + cwd + "/.git/hooks " + cwd + "/.git/hooks",
		"--ro-bind " + cwd + "/.git/config " + cwd + "/.git/config",
		"--ro-bind " + cwd + "/a/b/.bashrc " + cwd + "/a/b/.bashrc",
		"--ro-bind " + empty + " " + cwd + "/sub/.git/hooks", // absent: an empty directory
		"--ro-bind " + empty + " " + cwd + "/.bashrc",
		"--ro-bind " + cwd + "/.git " + cwd + "/.git", // pin
		"--seccomp 3",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, strings.Join(res.Args, "\n"))
		}
	}
	for _, not := range []string{cwd + "/a/b/c/.profile", cwd + "/sub/deeper/.git", home + "/other", ".env.example"} {
		if strings.Contains(args, not) {
			t.Errorf("args name %q:\n%s", not, strings.Join(res.Args, "\n"))
		}
	}
	// The pin comes before the write root; the deny binds after the read section.
	if strings.Index(args, "--ro-bind "+cwd+"/.git ") > strings.Index(args, "--bind "+cwd+" ") {
		t.Errorf("pin after the write root:\n%s", strings.Join(res.Args, "\n"))
	}
	if len(res.Placeholders) == 0 || !contains(res.Placeholders, cwd+"/.bashrc") || !contains(res.Placeholders, cwd+"/.claude") {
		t.Errorf("placeholders = %v", res.Placeholders)
	}
}

func TestResolveRefusesUnanchoredGlob(t *testing.T) {
	home, cwd := project(t)
	_, err := Resolve(plan(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["/*/secret"], "allowWrite": [], "denyWrite": []}}`), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), SeccompFD: 3})
	if err == nil || !strings.Contains(err.Error(), "literal directory") {
		t.Errorf("Resolve = %v, want a refusal", err)
	}
}

func TestResolveNeedsSeccompFD(t *testing.T) {
	home, cwd := project(t)
	_, err := Resolve(plan(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir()})
	if err == nil {
		t.Error("Resolve without a seccomp descriptor succeeded")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestResolveCredentialMask(t *testing.T) {
	home, cwd := project(t)
	settings := `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []},
		"credentials": {"files": [{"path": "./src/main.go", "mode": "mask"}], "allowPlaintextInject": true}}`
	// Without a masked copy the file is hidden: stricter, never weaker.
	res := resolveFor(t, settings, home, cwd)
	if args := strings.Join(res.Args, " "); !strings.Contains(args, "--ro-bind /dev/null "+cwd+"/src/main.go") {
		t.Errorf("unmasked file not hidden:\n%s", strings.Join(res.Args, "\n"))
	}
	copyPath := filepath.Join(t.TempDir(), "masked")
	res, err := Resolve(plan(t, settings), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), SeccompFD: 3, MaskedCopy: func(_, p string) (string, error) {
		if p != cwd+"/src/main.go" {
			t.Errorf("MaskedCopy(%q)", p)
		}
		return copyPath, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(res.Args, " ")
	if !strings.Contains(args, "--ro-bind "+copyPath+" "+cwd+"/src/main.go") || !strings.Contains(args, "--ro-bind "+cwd+"/src "+cwd+"/src") {
		t.Errorf("mask or its pin missing:\n%s", strings.Join(res.Args, "\n"))
	}
}

// TestResolveRefusesReplaceableSymlink: a protected path reached through a
// symlink the sandbox could replace is refused.
func TestResolveRefusesReplaceableSymlink(t *testing.T) {
	home, cwd := project(t)
	if err := os.Symlink(filepath.Join(home, "other"), filepath.Join(cwd, ".vscode")); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve(plan(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), SeccompFD: 3, EmptyDir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "symlink in a writable directory") {
		t.Errorf("Resolve = %v, want a refusal", err)
	}
	// Outside the write area the same link is harmless.
	if _, err := Resolve(plan(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), Host{Home: home, Cwd: cwd, TmpDir: t.TempDir(), SeccompFD: 3}); err != nil {
		t.Errorf("read-only cwd: %v", err)
	}
}

// TestResolvePatternUnderMetacharacterRoot: the home or working directory
// behind ${HOME} and ${CWD} is a name, not a pattern; a project directory
// called "[x] proj*" must not turn "**/*.pem" into a pattern for other
// directories (the deny would then hide nothing of the project).
func TestResolvePatternUnderMetacharacterRoot(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "h?me")
	cwd := filepath.Join(home, "[x] proj*")
	decoy := filepath.Join(home, "x proj") // what "[x] proj*" means as a pattern
	for _, d := range []string{cwd + "/keys", decoy + "/keys", home + "/.aws"} {
		testenv.MkdirAll(t, d, 0o755)
	}
	for _, f := range []string{cwd + "/keys/a.pem", decoy + "/keys/b.pem", home + "/.aws/credentials"} {
		testenv.WriteFile(t, f, []byte("x\n"), 0o644)
	}
	res := resolveFor(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["**/*.pem", "~/.a*/cred*"], "allowWrite": [], "denyWrite": []}}`, home, cwd)
	args := strings.Join(res.Args, "\n")
	for _, want := range []string{"--ro-bind\n/dev/null\n" + cwd + "/keys/a.pem", "--ro-bind\n/dev/null\n" + home + "/.aws/credentials"} {
		if !strings.Contains(args, want) {
			t.Errorf("args lack %q:\n%s", want, args)
		}
	}
	if strings.Contains(args, decoy) {
		t.Errorf("the pattern reached a directory outside the project:\n%s", args)
	}
}

// TestResolvePrivateTmp: the run's TMPDIR is bound at /tmp/claude after
// every write root and read deny that could cover it, a write deny over it
// makes it read-only, and an allowWrite naming it binds nothing of the
// host's.
func TestResolvePrivateTmp(t *testing.T) {
	home, cwd := project(t)
	tmp := t.TempDir()
	for _, c := range []struct {
		name, fs string
		want     []string // in this order
		not      []string
	}{
		{"default", `"denyRead": [], "allowWrite": [], "denyWrite": []`,
			[]string{"--bind " + tmp + " /tmp/claude", "--setenv TMPDIR /tmp/claude"}, []string{"--bind /tmp/claude"}},
		{"tmp writable", `"denyRead": [], "allowWrite": ["/tmp", "/tmp/claude/x"], "denyWrite": []`,
			[]string{"--bind /tmp /tmp", "--bind " + tmp + " /tmp/claude"}, []string{"--bind /tmp/claude"}},
		{"tmp hidden", `"denyRead": ["/tmp"], "allowWrite": [], "denyWrite": []`,
			[]string{"--tmpfs /tmp", "--bind " + tmp + " /tmp/claude"}, nil},
		{"tmp write-protected", `"denyRead": [], "allowWrite": [], "denyWrite": ["/tmp/claude"]`,
			[]string{"--bind " + tmp + " /tmp/claude", "--ro-bind " + tmp + " /tmp/claude"}, nil},
	} {
		settings := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {` + c.fs + `}}`
		res, err := Resolve(plan(t, settings), Host{Home: home, Cwd: cwd, TmpDir: tmp, SeccompFD: 3})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		args := strings.Join(res.Args, " ") + " "
		at := 0
		for _, w := range c.want {
			i := strings.Index(args[at:], w+" ")
			if i < 0 {
				t.Errorf("%s: no %q after position %d:\n%s", c.name, w, at, strings.Join(res.Args, "\n"))
				break
			}
			at += i + len(w)
		}
		for _, n := range c.not {
			if strings.Contains(args, n+" ") {
				t.Errorf("%s: %q in:\n%s", c.name, n, strings.Join(res.Args, "\n"))
			}
		}
	}
	if _, err := Resolve(plan(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), Host{Home: home, Cwd: cwd, SeccompFD: 3}); err == nil {
		t.Error("resolved a private TMPDIR without a directory for it")
	}
}
