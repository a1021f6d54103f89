//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/artifact"
	"srt.dev/emit/bwrap/seccomp"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/sandbox"
	"srt.dev/runtime/trust"
	"srt.dev/schema"
)

// writePlan compiles settings into an artifact directory dir/plan, for a
// concrete host when o names one.
func writePlan(t testing.TB, dir, settings string, o artifact.Options) string {
	t.Helper()
	p, diags, err := compiler.CompileFile("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	files, err := artifact.Build(p, []artifact.Target{artifact.Linux}, o)
	if err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan")
	testenv.RemoveAll(t, plan)
	for _, n := range files.Names() {
		testenv.MkdirAll(t, filepath.Dir(filepath.Join(plan, n)), 0o755)
		testenv.WriteFile(t, filepath.Join(plan, n), files[n], 0o644)
	}
	trustPlan(t, plan, files["plan.json"])
	return plan
}

// trustPlan records the plan as trusted where srt run by srt() in the
// plan's parent looks (XDG_STATE_HOME, else HOME the plan's parent), as
// srtc compile would have, or srt trust after a review. Tests that run
// srt as another user, or with a state directory of its own, trust their
// plans with srt trust.
func trustPlan(t testing.TB, plan string, planJSON []byte) {
	t.Helper()
	t.Setenv("HOME", filepath.Dir(plan))
	if err := trust.Trust(plan, artifact.Digest(planJSON), "test"); err != nil {
		t.Fatal(err)
	}
}

// editPlan replaces (or with nil, removes) a file of the plan and updates
// its checksum in plan.json, as a reviewed change would.
func editPlan(t testing.TB, plan, name string, b []byte) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(plan, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	sums := m["files"].(map[string]any)
	path := filepath.Join(plan, filepath.FromSlash(name))
	if b == nil {
		delete(sums, name)
		testenv.Remove(t, path)
	} else {
		sum := sha256.Sum256(b)
		sums[name] = hex.EncodeToString(sum[:])
		testenv.WriteFile(t, path, b, 0o644)
	}
	raw, _ = json.MarshalIndent(m, "", "  ")
	testenv.WriteFile(t, filepath.Join(plan, "plan.json"), raw, 0o644)
	trustPlan(t, plan, raw)
}

func hostArch(t *testing.T) seccomp.Arch {
	a, ok := map[string]seccomp.Arch{"amd64": seccomp.X86_64, "arm64": seccomp.AArch64}[goruntime.GOARCH]
	if !ok {
		t.Skip("no seccomp program for " + goruntime.GOARCH)
	}
	return a
}

// fakeBwrap writes a bubblewrap stand-in that records its arguments (one
// per line) in out/argv and the bytes of its --seccomp descriptor in
// out/seccomp, then exits 3.
func fakeBwrap(t *testing.T) (path, out string) {
	out = t.TempDir()
	path = filepath.Join(out, "bwrap")
	testenv.WriteFile(t, path, []byte(`#!/bin/sh
prev=
for a in "$@"; do
	if [ "$prev" = --seccomp ]; then cat /proc/$$/fd/$a > `+out+`/seccomp; fi
	prev=$a
done
printf '%s\n' "$@" > `+out+`/argv
exit 3
`), 0o755)
	return path, out
}

const planSettings = `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["./secret.env"], "allowWrite": ["."], "denyWrite": []}}`

// TestPlanSeccompIsTheFile: bubblewrap gets the bytes of
// linux/seccomp.<arch>.bpf, not a program rebuilt from the policy: a plan
// whose reviewed program is the namespaces rules only (the policy asks for
// unix+namespaces) lets the command open a unix socket.
func TestPlanSeccompIsTheFile(t *testing.T) {
	requireSandbox(t)
	arch := hostArch(t)
	dir := project(t)
	fake, out := fakeBwrap(t)
	plan := writePlan(t, dir, `{"bwrapPath": "`+fake+`", `+planSettings[1:], artifact.Options{})
	name := "linux/seccomp." + string(arch) + ".bpf"
	edited, err := seccomp.Build(arch, seccomp.Rules{Namespaces: true}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	editPlan(t, plan, name, edited)
	if code, _, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "true"); code != 3 {
		t.Fatalf("run with a fake bwrap: %d %s", code, errOut)
	}
	got, _ := os.ReadFile(filepath.Join(out, "seccomp"))
	if !bytes.Equal(got, edited) {
		t.Errorf("bubblewrap read %d bytes on the seccomp descriptor, want the %d of %s", len(got), len(edited), name)
	}

	// The same with the real bubblewrap: the file decides what is refused.
	plan = writePlan(t, dir, planSettings, artifact.Options{})
	probe := `python3 -c 'import socket; socket.socket(socket.AF_UNIX); print("unix ok")' 2>&1 | tail -1`
	if _, out, _ := srt(t, dir, "", "run", "--plan", plan, "-c", probe); out != "PermissionError: [Errno 1] Operation not permitted\n" {
		t.Errorf("compiled program: %q", out)
	}
	editPlan(t, plan, name, edited)
	if _, out, errOut := srt(t, dir, "", "run", "--plan", plan, "-c", probe); out != "unix ok\n" {
		t.Errorf("edited program: %q %s", out, errOut)
	}
}

// TestPlanArgsAsEdited: an edited bwrap.args (its checksum updated, as
// after review) runs as edited.
func TestPlanArgsAsEdited(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	plan := writePlan(t, dir, planSettings, artifact.Options{})
	script := `echo "edited=$PLAN_EDITED"; cat secret.env 2>/dev/null || echo hidden`
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "-c", script); code != 0 || out != "edited=\nhidden\n" {
		t.Fatalf("as compiled: %d %q %s", code, out, errOut)
	}
	args, err := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(args), "\n") {
		if strings.HasPrefix(l, "@deny-read ${CWD}/secret.env") {
			continue // the review lifted the read deny
		}
		lines = append(lines, l)
		if l == "--unshare-net" {
			lines = append(lines, `--setenv PLAN_EDITED "yes, reviewed"`)
		}
	}
	editPlan(t, plan, "linux/bwrap.args", []byte(strings.Join(lines, "\n")))
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "-c", script); code != 0 || out != "edited=yes, reviewed\ns3cret\n" {
		t.Errorf("as edited: %d %q %s", code, out, errOut)
	}
	// --dry-run names the line of each word.
	code, out, _ := srt(t, dir, "", "run", "--plan", plan, "--dry-run", "--", "true")
	n := 0
	for i, l := range lines {
		if strings.HasPrefix(l, "--setenv PLAN_EDITED") {
			n = i + 1
		}
	}
	want := regexp.MustCompile(`(?m)^--setenv +# bwrap.args:` + itoa(n) + `\nPLAN_EDITED +# .*:` + itoa(n) + `\n"yes, reviewed" +# .*:` + itoa(n) + `\n`)
	if code != 0 || !want.MatchString(out) || !strings.Contains(out, "\ntrue ") {
		t.Errorf("dry run: %d\n%s", code, out)
	}
	// The proxies' password is not printed (a review pastes this).
	if pw := regexp.MustCompile(`://[^:/@\s]+:([^@\s]+)@`).FindStringSubmatch(out); pw == nil || pw[1] != sandbox.Redaction {
		t.Errorf("dry run shows the proxy URL's password as %q, want %q:\n%s", pw, sandbox.Redaction, out)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestPlanRefusals: what srt run --plan will not run, and says why.
func TestPlanRefusals(t *testing.T) {
	requireSandbox(t)
	arch := hostArch(t)
	dir := project(t)
	for _, tt := range []struct {
		name string
		edit func(plan string)
		want string
	}{
		{"unknown format", func(plan string) {
			raw, err := os.ReadFile(filepath.Join(plan, "plan.json"))
			if err != nil {
				t.Fatal(err)
			}
			testenv.WriteFile(t, filepath.Join(plan, "plan.json"), bytes.Replace(raw, []byte(`"formatVersion": `+strconv.Itoa(policy.FormatVersion)), []byte(`"formatVersion": 99`), 1), 0o644)
		}, "plan format 99, and this srt reads format " + strconv.Itoa(policy.FormatVersion) + " only: compile it again"},
		{"no program for this machine", func(plan string) {
			editPlan(t, plan, "linux/seccomp."+string(arch)+".bpf", nil)
		}, "the plan has none for this machine (linux/seccomp." + string(arch) + ".bpf): compile it again"},
		{"unknown step", func(plan string) {
			args, err := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
			if err != nil {
				t.Fatal(err)
			}
			editPlan(t, plan, "linux/bwrap.args", append(args, "@kernel-mystery /x\n"...))
		}, "unknown step @kernel-mystery: this srt does not know it"},
		{"not a plan line", func(plan string) {
			args, _ := os.ReadFile(filepath.Join(plan, "linux", "bwrap.args"))
			editPlan(t, plan, "linux/bwrap.args", append(args, "ro-bind / /\n"...))
		}, `is neither a bubblewrap option (--name) nor a step (@name)`},
	} {
		plan := writePlan(t, dir, planSettings, artifact.Options{})
		tt.edit(plan)
		code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran")
		if code != 1 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %q", tt.name, code, out, errOut, tt.want)
		}
	}
}

// TestConcretePlanRuns: a plan compiled with --home and --cwd runs on the
// host it names, and only there.
func TestConcretePlanRuns(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	plan := writePlan(t, dir, planSettings, artifact.Options{Home: dir, Cwd: dir})
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "-c", "cat secret.env || echo hidden"); code != 0 || out != "hidden\n" {
		t.Errorf("on its host: %d %q %s", code, out, errOut)
	}
	sub := filepath.Join(dir, "sub")
	testenv.Mkdir(t, sub, 0o755)
	if code, _, errOut := srt(t, sub, "", "run", "--plan", plan, "--", "true"); code != 1 || !strings.Contains(errOut, "is a concrete plan for the home directory "+dir+", and this run's is "+sub) {
		t.Errorf("another home: %d %q", code, errOut)
	}
	plan = writePlan(t, dir, planSettings, artifact.Options{Cwd: sub})
	if code, _, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "true"); code != 1 || !strings.Contains(errOut, "is a concrete plan for the working directory "+sub+", and this run's is "+dir) {
		t.Errorf("another working directory: %d %q", code, errOut)
	}
}

// TestSettingsAndPlanAgree: srt --settings F and srt run --plan DIR (F
// compiled) hand bubblewrap the same command line on the same host.
func TestSettingsAndPlanAgree(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.MkdirAll(t, filepath.Join(dir, ".git", "hooks"), 0o755)
	testenv.WriteFile(t, filepath.Join(dir, ".git", "config"), nil, 0o644)
	fake, out := fakeBwrap(t)
	settings := `{"bwrapPath": "` + fake + `", "network": {"allowedDomains": ["example.com"], "deniedDomains": []},
		"filesystem": {"denyRead": ["~/.ssh", "./secret.env", "**/*.pem"], "allowRead": [], "allowWrite": [".", "/tmp/claude"], "denyWrite": ["./build"]},
		"git": {"safeDirectories": ["."]}, "credentials": {"envVars": [{"name": "AWS_SECRET_ACCESS_KEY", "mode": "deny"}]}}`
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(settings), 0o644)
	argv := func(args ...string) string {
		t.Helper()
		if code, _, errOut := srt(t, dir, "", args...); code != 3 {
			t.Fatalf("%q: exit %d %s", args, code, errOut)
		}
		b, _ := os.ReadFile(filepath.Join(out, "argv"))
		// This run's proxy password, scratch and temporary directories.
		s := string(b)
		if m := regexp.MustCompile(`(?m)^CLOUDSDK_PROXY_PASSWORD\n(.*)$`).FindStringSubmatch(s); m != nil {
			s = strings.ReplaceAll(s, m[1], "TOKEN")
		}
		s = regexp.MustCompile(`/tmp/run-[0-9]+`).ReplaceAllString(s, "/tmp/run-N") // its TMPDIR
		return regexp.MustCompile(`scratch-[0-9]+`).ReplaceAllString(s, "scratch-N")
	}
	// The one difference: the policy in use, read-only in the sandbox,
	// is the settings file in one and the plan directory in the other.
	fromSettings := strings.ReplaceAll(argv("--settings", "s.json", "-c", "true"), filepath.Join(dir, "s.json")+"\n", "POLICY\n")
	plan := writePlan(t, dir, settings, artifact.Options{})
	fromPlan := strings.ReplaceAll(argv("run", "--plan", plan, "-c", "true"), plan+"\n", "POLICY\n")
	if !strings.Contains(fromPlan, "--ro-bind\nPOLICY\nPOLICY\n") {
		t.Errorf("the plan directory in use is not read-only in its sandbox:\n%s", fromPlan)
	}
	if fromSettings != fromPlan {
		t.Errorf("bubblewrap argv differs:\n--settings:\n%s\nrun --plan:\n%s", fromSettings, fromPlan)
	}
	if !strings.Contains(fromPlan, "--seccomp\n3\n") || !strings.Contains(fromPlan, "--tmpfs\n"+dir+"/.ssh") && !strings.Contains(fromPlan, "--ro-bind\n/dev/null\n"+dir+"/secret.env\n") {
		t.Errorf("unexpected argv:\n%s", fromPlan)
	}
}

// TestPlanTrust: srt run --plan runs a plan this machine trusts (srtc
// compile wrote it here, or srt trust after a review), refuses one that
// changed since, saying what to do, and runs it once trusted again; a dry
// run only warns.
func TestPlanTrust(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	plan := writePlan(t, dir, planSettings, artifact.Options{})
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran"); code != 0 || out != "ran\n" {
		t.Fatalf("a trusted plan: exit %d %q\n%s", code, out, errOut)
	}
	// A change with its checksum recomputed, not trusted.
	args, err := os.ReadFile(filepath.Join(plan, "linux/bwrap.args"))
	if err != nil {
		t.Fatal(err)
	}
	args = append(args, "# a comment\n"...)
	testenv.WriteFile(t, filepath.Join(plan, "linux/bwrap.args"), args, 0o644)
	raw, err := os.ReadFile(filepath.Join(plan, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(args)
	raw = regexp.MustCompile(`("linux/bwrap.args": ")[0-9a-f]+`).ReplaceAll(raw, []byte("${1}"+hex.EncodeToString(sum[:])))
	testenv.WriteFile(t, filepath.Join(plan, "plan.json"), raw, 0o644)
	code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran")
	if code != 1 || out != "" || !strings.Contains(errOut, "is not trusted on this machine") || !strings.Contains(errOut, "srt trust "+plan) {
		t.Fatalf("an untrusted plan: exit %d %q\n%s", code, out, errOut)
	}
	code, out, errOut = srt(t, dir, "", "run", "--plan", plan, "--dry-run", "--", "true")
	if code != 0 || !strings.Contains(out, "--unshare-net") || !strings.Contains(errOut, "srt run would refuse it") {
		t.Errorf("a dry run of an untrusted plan: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := srt(t, dir, "", "trust", plan); code != 0 || !strings.Contains(out, "trusted the plan in "+plan) {
		t.Fatalf("srt trust: exit %d %q\n%s", code, out, errOut)
	}
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran"); code != 0 || out != "ran\n" {
		t.Errorf("a plan trusted again: exit %d %q\n%s", code, out, errOut)
	}
	if code, _, errOut := srt(t, dir, "", "trust", filepath.Join(dir, "absent")); code != 1 || !strings.Contains(errOut, "absent") {
		t.Errorf("srt trust of no plan: exit %d\n%s", code, errOut)
	}
}

// TestPlanTrustedInItsDirectory: a plan is trusted in the directory where
// it was compiled or trusted, and nowhere else: moved, it is refused until
// trusted where it is; reached through a symbolic link, it is refused,
// with its own path to use, and srt trust refuses the link too. The
// control is the same plan by its own path, which runs.
func TestPlanTrustedInItsDirectory(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	plan := writePlan(t, dir, planSettings, artifact.Options{})
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran"); code != 0 || out != "ran\n" {
		t.Fatalf("control, the plan by its own path: exit %d %q\n%s", code, out, errOut)
	}
	link := filepath.Join(dir, "link")
	testenv.Symlink(t, plan, link)
	code, out, errOut := srt(t, dir, "", "run", "--plan", link, "--", "echo", "ran")
	if code != 1 || out != "" || !strings.Contains(errOut, "is reached through a symbolic link") || !strings.Contains(errOut, "srt run --plan "+plan) {
		t.Errorf("a plan through a link: exit %d %q\n%s", code, out, errOut)
	}
	if code, _, errOut := srt(t, dir, "", "trust", link); code != 1 || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("srt trust of a link: exit %d\n%s", code, errOut)
	}
	moved := filepath.Join(dir, "moved")
	testenv.Rename(t, plan, moved)
	code, out, errOut = srt(t, dir, "", "run", "--plan", moved, "--", "echo", "ran")
	if code != 1 || out != "" || !strings.Contains(errOut, "no plan is trusted there") || !strings.Contains(errOut, "srt trust "+moved) {
		t.Errorf("a plan moved: exit %d %q\n%s", code, out, errOut)
	}
	if code, _, errOut := srt(t, dir, "", "trust", moved); code != 0 {
		t.Fatalf("srt trust: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := srt(t, dir, "", "run", "--plan", moved, "--", "echo", "ran"); code != 0 || out != "ran\n" {
		t.Errorf("a plan moved, trusted where it is: exit %d %q\n%s", code, out, errOut)
	}
	// Moved back unchanged, it is still the plan recorded for its first
	// place, and runs there.
	testenv.Rename(t, moved, plan)
	if code, out, errOut := srt(t, dir, "", "run", "--plan", plan, "--", "echo", "ran"); code != 0 || out != "ran\n" {
		t.Errorf("the same plan back where it was trusted: exit %d %q\n%s", code, out, errOut)
	}
}
