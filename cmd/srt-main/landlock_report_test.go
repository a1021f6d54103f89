//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"srt.dev/compiler"
	"srt.dev/emit/artifact"
	"srt.dev/internal/kaudit"
	"srt.dev/internal/testenv"
	"srt.dev/review/query"
	"srt.dev/schema"
)

// reportSettings hide ~/.ssh and let the command write the project only.
const reportSettings = `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`

// reportScript makes two writes the mounts let through and the second
// layer refuses (a file in the sandbox's /dev, one in the empty directory
// over ~/.ssh), one the read-only mount refuses first (~/x: EROFS, which
// the kernel's audit does not record and the write watch reports, for
// every user), and one it may make.
const reportScript = `echo > /dev/srt-probe; echo x > ~/.ssh/known_hosts; touch ~/x; echo in > inside.txt && echo "inside ok"`

// TestLandlockRefusalsReported runs a command whose writes the second
// layer refuses, with the kernel's audit on. As root srt reports them, in
// the violations block, the refusal lines (with the rule that decided,
// the one srtc explain names) and the audit log, after the write the
// mounts refused (the write watch's); as nobody, which cannot read the
// audit, it reports that one only, though the same writes are refused.
func TestLandlockRefusalsReported(t *testing.T) {
	requireSandbox(t)
	landlockHost(t)
	if os.Geteuid() != 0 {
		t.Skip("reading the kernel's audit takes root")
	}
	testenv.KernelAudit(t)
	for _, uid := range []int{0, 65534} {
		t.Run("uid"+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			testenv.MkdirAll(t, filepath.Join(root, ".ssh"), 0o700)
			testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(reportSettings), 0o644)
			log := filepath.Join(root, "audit.jsonl")
			code, out := srtAs(t, bin, uid, root, proj, "--settings", "s.json", "--violations", "--refusals", "always", "--audit-log", log, "-c", reportScript)
			if code != 0 || !strings.Contains(out, "inside ok") {
				t.Fatalf("exit %d\n%s", code, out)
			}
			// The refusals happened, for either user.
			for _, refused := range []string{"/dev/srt-probe: Permission denied", "/.ssh/known_hosts: Permission denied", "/x': Read-only file system"} {
				if !strings.Contains(out, refused) {
					t.Errorf("no %q in\n%s", refused, out)
				}
			}
			mounts := "deny file-write-create " + root + "/x (create: outside the write roots)\n"
			if uid != 0 {
				if want := "<sandbox_violations>\n" + mounts + "</sandbox_violations>\n"; !strings.HasSuffix(out, want) || strings.Contains(out, "fs.make_reg") || strings.Contains(out, "(Landlock)") {
					t.Errorf("nobody cannot read the kernel's audit: srt must report the write watch's refusal only:\n%s", out)
				}
				return
			}
			block := "<sandbox_violations>\n" + mounts +
				"deny file-write-create /dev (fs.make_reg: outside the write roots)\n" +
				"deny file-write-create " + root + "/.ssh (fs.make_reg: outside the write roots)\n" +
				"</sandbox_violations>\n"
			if !strings.HasSuffix(out, block) {
				t.Errorf("output does not end with\n%s\ngot:\n%s", block, out)
			}
			for _, line := range []string{
				"srt sandbox refused creating a file in /dev: no write root covers it (filesystem.allowWrite in s.json and srt's defaults); the second layer (Landlock) refused it.\n",
				"srt sandbox refused creating a file in " + root + "/.ssh: no write root covers it (filesystem.allowWrite in s.json and srt's defaults), and filesystem.denyRead[0] (s.json:1:86) hides " + root + "/.ssh behind an empty directory; the second layer (Landlock) refused it.\n",
			} {
				if !strings.Contains(out, line) {
					t.Errorf("no refusal line %q in\n%s", line, out)
				}
			}
			checkAuditLog(t, log, root)
			// The rule reported is the one srtc explain answers with.
			p, diags, err := compiler.CompileFile("s.json", []byte(reportSettings), schema.Options{OS: schema.OSPosix})
			if err != nil || diags != nil {
				t.Fatal(err, diags)
			}
			e := query.New(p, query.Options{Home: root, Cwd: proj})
			for _, f := range []string{"/dev/srt-probe", root + "/.ssh/known_hosts"} {
				if d := e.Write(f, query.Linux); d.Allow || d.Rule.Key != "default" {
					t.Errorf("srtc explain --write %s: %+v, want a refusal by the default", f, d)
				}
			}
		})
	}
}

// checkAuditLog reads the audit log of TestLandlockRefusalsReported: the
// start and exit of the run, and a record of each refused write.
func checkAuditLog(t *testing.T, log, root string) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if r["layer"] == nil {
			continue
		}
		delete(r, "time")
		delete(r, "commandHash")
		v, _ := json.Marshal(r)
		got = append(got, string(v))
	}
	want := []string{
		`{"access":"create","allow":false,"layer":"mounts","path":"` + root + `/x","program":"sh","reason":"outside the write roots","rule":"default","stage":"mounts"}`,
		`{"access":"fs.make_reg","allow":false,"layer":"landlock","path":"/dev","program":"sh","reason":"outside the write roots","rule":"default","stage":"landlock"}`,
		`{"access":"fs.make_reg","allow":false,"layer":"landlock","path":"` + root + `/.ssh","program":"sh","reason":"outside the write roots","rule":"default","stage":"landlock"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("audit log records of refused writes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLandlockRefusalsAuditOff: with the kernel's audit off, srt reports
// nothing of the second layer's refusals, even as root, and never turns
// the audit on.
func TestLandlockRefusalsAuditOff(t *testing.T) {
	requireSandbox(t)
	landlockHost(t)
	if os.Geteuid() != 0 {
		t.Skip("turning the kernel's audit off takes root")
	}
	testenv.KernelAuditOff(t)
	bin, root, proj := publicProject(t)
	testenv.MkdirAll(t, filepath.Join(root, ".ssh"), 0o700)
	testenv.WriteFile(t, filepath.Join(proj, "s.json"), []byte(reportSettings), 0o644)
	code, out := srtAs(t, bin, 0, root, proj, "--settings", "s.json", "--violations", "-d", "-c", reportScript)
	if code != 0 || !strings.Contains(out, "/dev/srt-probe: Permission denied") {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if strings.Contains(out, "fs.make_reg") || strings.Contains(out, "(Landlock)") {
		t.Errorf("the second layer's refusals reported with the kernel's audit off:\n%s", out)
	}
	if !strings.Contains(out, "landlock: refusals are not reported: the kernel's audit is off") {
		t.Errorf("the debug log does not say why nothing is reported:\n%s", out)
	}
}

// BenchmarkLandlockReport measures what reading the second layer's
// refusals costs "srt run --plan DIR -c CMD" as root, interleaved in each
// iteration: "true" with the kernel's audit off (srt does not read it),
// "true" with it on (srt subscribes, lists the init step's threads, and
// checks that the kernel's queue is empty after the run), and a command
// with one refused write with it on (srt also waits for the domain's
// release). It turns the audit off and on between runs, and puts it back
// as it was.
//
//	go test ./cmd/srt-main -run '^$' -bench BenchmarkLandlockReport -benchtime 100x
func BenchmarkLandlockReport(b *testing.B) {
	testenv.Require(b, "bwrap")
	testenv.KernelAudit(b)
	dir := b.TempDir()
	plan := writePlan(b, dir, `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`, artifact.Options{})
	env := append(os.Environ(), "HOME="+dir)
	run := func(audit bool, script string) time.Duration {
		if err := kaudit.SetEnabled(audit); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(srtBin, "run", "--plan", plan, "--violations", "-c", script)
		cmd.Dir, cmd.Env = dir, env
		start := time.Now()
		out, err := cmd.CombinedOutput()
		d := time.Since(start)
		if reported := strings.Contains(string(out), "deny file-write-create /dev "); err != nil || reported != (audit && script != "true") {
			b.Fatalf("%s (audit %v): %v\n%s", script, audit, err, out)
		}
		return d
	}
	refused := "echo > /dev/srt-probe 2>/dev/null; true"
	run(false, "true") // warm up
	var tOff, tOn, tRefused time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tOff += run(false, "true")
		tOn += run(true, "true")
		tRefused += run(true, refused)
	}
	b.StopTimer()
	kaudit.SetEnabled(true) // KernelAudit's clean-up puts back what was
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(ms(tOff), "audit-off-ms")
	b.ReportMetric(ms(tOn), "audit-on-ms")
	b.ReportMetric(ms(tRefused), "one-refusal-ms")
	b.ReportMetric(ms(tOn)-ms(tOff), "reading-cost-ms")
	b.ReportMetric(ms(tRefused)-ms(tOn), "refusal-cost-ms")
}
