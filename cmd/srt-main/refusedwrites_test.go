//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// TestRefusedWritesReported: three tasks done the obvious way in a
// project whose only write root is the project (a Go build with the
// build cache in the home directory, an npm install with its cache
// there, a git push to a bare repository beside the project) each end
// with a line naming the path the sandbox refused and the key to add to
// which settings file, as root and as nobody, without the kernel's
// audit. Writes that succeed (in the project, the run's TMPDIR, /dev/null)
// and names that exist already (mkdir -p) are never reported.
func TestRefusedWritesReported(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "go", "npm", "git")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
				"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
			testenv.MkdirAll(t, filepath.Join(root, ".cache"), 0o755)
			if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(root, "remote.git")).CombinedOutput(); err != nil {
				t.Fatalf("git init --bare: %v %s", err, out)
			}
			script := strings.Join([]string{
				`unset XDG_CACHE_HOME GOCACHE GOPATH GOFLAGS`,
				`export PATH=` + filepath.Dir(goBin) + `:$PATH`,
				`go mod init example.com/x >/dev/null 2>&1`,
				`echo 'package main; func main(){}' > main.go`,
				`go build -o h . 2>/dev/null && echo "go built"`,
				`echo '{"name": "x", "version": "1.0.0"}' > package.json`,
				`npm install --offline >/dev/null 2>&1 && echo "npm installed"`,
				`git init -q . && git -c user.email=a@example.com -c user.name=a commit -q --allow-empty -m x`,
				`git push -q ../remote.git HEAD:main 2>/dev/null && echo pushed`,
				// Writes that succeed, and a name that exists.
				`echo ok > in.txt && mkdir -p d && mv in.txt d/ && rm d/in.txt && touch "$TMPDIR/tmp-marker" && echo x > /dev/null && mkdir -p "$HOME/.cache" && echo "writes ok"`,
			}, "\n")
			code, out := srtAs(t, bin, uid, root, proj, "--settings", settings, "--refusals=always", "--violations", "-c", script)
			if code != 0 || !strings.Contains(out, "writes ok") {
				t.Fatalf("exit %d\n%s", code, out)
			}
			// npm installs nothing here: its refused cache only costs its log.
			for _, done := range []string{"go built", "pushed"} {
				if strings.Contains(out, done) {
					t.Errorf("%q: the task should fail outside the write roots\n%s", done, out)
				}
			}
			for _, want := range []string{
				"srt sandbox refused creating the directory " + filepath.Join(root, ".cache", "go-build") + `: no write root covers it. To allow it, add "~/.cache/go-build" to filesystem.allowWrite in ` + settings + ".",
				"srt sandbox refused creating the directory " + filepath.Join(root, ".npm") + `: no write root covers it. To allow it, add "~/.npm" to filesystem.allowWrite in ` + settings + ".",
				"srt sandbox refused creating the directory " + filepath.Join(root, "remote.git", "objects", "tmp_objdir-incoming-"),
				`: no write root covers it. To allow it, add "~/remote.git" to filesystem.allowWrite in ` + settings + ".",
				"deny file-write-create " + filepath.Join(root, ".npm") + " (mkdir: outside the write roots)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, "srt sandbox refused") && !strings.HasPrefix(line, "deny file-") {
					continue
				}
				for _, ok := range []string{proj + "/", "tmp-marker", "/dev/null", filepath.Join(root, ".cache") + ":", filepath.Join(root, ".cache") + " "} {
					if strings.Contains(line, ok) {
						t.Errorf("a write that succeeded (or a name that exists) reported: %s", line)
					}
				}
			}
		})
	}
}

// TestRefusedWritesHostile: what the watch reads is the command's to
// choose. A write through a link in the project to a place outside the
// write roots is reported where it lands; a link loop (ELOOP) and a FIFO
// outside the write roots opened for writing (the kernel does not refuse
// a FIFO on a read-only mount: ENXIO without a reader) are not refusals
// and are not reported; a name with a line break is shown quoted, never as
// a line of srt's; and the run ends, as root and as nobody.
func TestRefusedWritesHostile(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3", "mkfifo")
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
				"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
			outside := filepath.Join(root, "outside")
			testenv.MkdirAll(t, outside, 0o755)
			if out, err := exec.Command("mkfifo", filepath.Join(outside, "fifo")).CombinedOutput(); err != nil {
				t.Fatalf("mkfifo: %v %s", err, out)
			}
			testenv.Symlink(t, filepath.Join(outside, "target"), filepath.Join(proj, "link"))
			testenv.Symlink(t, "loop2", filepath.Join(proj, "loop1"))
			testenv.Symlink(t, "loop1", filepath.Join(proj, "loop2"))
			script := strings.Join([]string{
				`echo x > link 2>/dev/null || echo "link refused"`,
				`echo x > loop1 2>/dev/null || echo "loop refused"`,
				`python3 -c 'import os, sys
try:
    os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
except OSError as e:
    print("fifo", e.strerror)' ` + filepath.Join(outside, "fifo"),
				`touch "$HOME/$(printf 'odd\nsrt sandbox refused nothing')" 2>/dev/null || echo "odd refused"`,
				`echo done`,
			}, "\n")
			code, out := srtAs(t, bin, uid, root, proj, "--settings", settings, "--refusals=always", "--violations", "-c", script)
			// The FIFO: ENXIO, or EACCES where the second layer refuses it.
			if code != 0 || !regexp.MustCompile(`link refused\n(.*\n)?loop refused\nfifo (No such device or address|Permission denied)\nodd refused\ndone\n`).MatchString(out) {
				t.Fatalf("exit %d\n%s", code, out)
			}
			for _, want := range []string{
				"srt sandbox refused creating " + filepath.Join(outside, "target") + `: no write root covers it.`,
				`srt sandbox refused creating "` + root + `/odd\nsrt sandbox refused nothing": no write root covers it.`,
			} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			for _, line := range strings.Split(out, "\n") {
				watched := strings.HasPrefix(line, "srt sandbox refused") && !strings.Contains(line, "(Landlock)") || strings.HasPrefix(line, "deny file-") && !strings.Contains(line, "(fs.")
				if watched && (strings.Contains(line, "loop") || strings.Contains(line, "fifo")) {
					t.Errorf("not a refusal of the sandbox's, reported: %s", line)
				}
				if strings.HasPrefix(line, "srt sandbox refused nothing") {
					t.Errorf("the command's name made a line of srt's: %q", line)
				}
			}
		})
	}
}

// TestRefusedNewFileAdvice: the advice of a refused new file at the top
// of the home directory, the README's `touch ~/x`, works when followed
// to the letter (issue 33): the run after it writes the file, as root and
// as nobody. Naming the missing file alone in allowWrite made srt create
// it as a directory, and the command then failed with "Is a directory".
func TestRefusedNewFileAdvice(t *testing.T) {
	requireSandbox(t)
	advice := regexp.MustCompile(`(?m)^srt sandbox refused creating \S+: no write root covers it\. To allow it, (?:create (\S+) on the host first \([^)]*\), then )?add "([^"]+)" to filesystem\.allowWrite in (\S+?)\.$`)
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
				"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
			script := `echo hi > ~/x && cat ~/x`
			code, out := srtAs(t, bin, uid, root, proj, "--settings", settings, "-c", script)
			m := advice.FindStringSubmatch(out)
			if code == 0 || m == nil {
				t.Fatalf("exit %d, no advice to follow:\n%s", code, out)
			}
			home := func(p string) string {
				if rest, ok := strings.CutPrefix(p, "~/"); ok {
					return filepath.Join(root, rest)
				}
				return p
			}
			if m[1] != "" {
				testenv.WriteFile(t, home(m[1]), nil, 0o644)
			}
			if m[3] != settings {
				t.Fatalf("the advice names %s, the run used %s", m[3], settings)
			}
			var s map[string]map[string][]string
			data, err := os.ReadFile(settings)
			if err == nil {
				err = json.Unmarshal(data, &s)
			}
			if err != nil {
				t.Fatal(err)
			}
			s["filesystem"]["allowWrite"] = append(s["filesystem"]["allowWrite"], m[2])
			data, _ = json.Marshal(s)
			testenv.WriteFile(t, settings, data, 0o644)
			code, out2 := srtAs(t, bin, uid, root, proj, "--settings", settings, "-c", script)
			if code != 0 || !strings.Contains(out2, "hi\n") || strings.Contains(out2, "srt sandbox refused") {
				t.Fatalf("following %q: exit %d\n%s", m[0], code, out2)
			}
			if fi, err := os.Lstat(filepath.Join(root, "x")); err != nil || !fi.Mode().IsRegular() {
				t.Errorf("~/x after the run: %v, %v", fi, err)
			}
		})
	}
}
