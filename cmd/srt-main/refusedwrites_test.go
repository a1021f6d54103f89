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
// audit. Each kind of write the watch sees refused in a directory outside
// the write roots (the user's own, so that only the sandbox refuses it)
// has its violation line and its record in --audit-log: writing and
// truncating a file, changing its mode and times, removing it, moving it
// away, removing a directory, making a link and a symbolic link. The
// lines come without --refusals (its default, with no terminal). Writes
// that succeed (in the project, the run's TMPDIR, /dev/null) and names
// that exist already (mkdir -p) are never reported.
func TestRefusedWritesReported(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "go", "npm", "git", "python3")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(writeProject), 0o644)
			testenv.MkdirAll(t, filepath.Join(root, ".cache"), 0o755)
			if out, err := exec.Command("git", "init", "-q", "--bare", filepath.Join(root, "remote.git")).CombinedOutput(); err != nil {
				t.Fatalf("git init --bare: %v %s", err, out)
			}
			ro := filepath.Join(root, "ro")
			testenv.MkdirAll(t, filepath.Join(ro, "d"), 0o755)
			for _, name := range []string{"w", "t", "c", "ti", "u", "m", "f"} {
				testenv.WriteFile(t, filepath.Join(ro, name), []byte("x\n"), 0o644)
			}
			auditLog := filepath.Join(root, "audit.jsonl")
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
				// Each kind of refused write, on a file of the user's.
				`cd "$HOME/ro"`,
				`echo x >> w; python3 -c 'import os; os.truncate("t", 0)'; chmod 600 c; python3 -c 'import os; os.utime("ti", (1, 1))'`,
				`rm -f u; mv m m2; rmdir d; ln f hard; ln -s f sym`,
				`echo "kinds done"`,
			}, "\n")
			code, out := srtAs(t, bin, uid, root, proj, "--settings", settings, "--violations", "--audit-log", auditLog, "-c", script)
			if code != 0 || !strings.Contains(out, "writes ok") || !strings.Contains(out, "kinds done") {
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
				"srt sandbox refused writing " + filepath.Join(ro, "w") + ": no write root covers it.",
				"deny file-write-data " + filepath.Join(ro, "w") + " (write: outside the write roots)",
				"deny file-write-data " + filepath.Join(ro, "t") + " (truncate: outside the write roots)",
				"deny file-write-mode " + filepath.Join(ro, "c") + " (chmod: outside the write roots)",
				"deny file-write-times " + filepath.Join(ro, "ti") + " (times: outside the write roots)",
				"deny file-write-unlink " + filepath.Join(ro, "u") + " (remove: outside the write roots)",
				"deny file-write-unlink " + filepath.Join(ro, "m") + " (rename: outside the write roots)",
				"deny file-write-unlink " + filepath.Join(ro, "d") + " (rmdir: outside the write roots)",
				"deny file-write-create " + filepath.Join(ro, "hard") + " (link: outside the write roots)",
				"deny file-write-create " + filepath.Join(ro, "sym") + " (symlink: outside the write roots)",
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
			checkWriteRecords(t, auditLog, map[string]string{
				filepath.Join(ro, "w"): "write", filepath.Join(ro, "t"): "truncate", filepath.Join(ro, "c"): "chmod",
				filepath.Join(ro, "ti"): "times", filepath.Join(ro, "u"): "remove", filepath.Join(ro, "m"): "rename",
				filepath.Join(ro, "d"): "rmdir", filepath.Join(ro, "hard"): "link", filepath.Join(ro, "sym"): "symlink",
			})
		})
	}
}

// checkWriteRecords checks that the audit log at log holds, for each path
// of want, the write watch's record of its refused access: the mounts
// refused it, outside the write roots, in sh's command.
func checkWriteRecords(t *testing.T, log string, want map[string]string) {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if r["layer"] != "mounts" {
			continue
		}
		p, _ := r["path"].(string)
		if _, ok := want[p]; !ok {
			continue
		}
		delete(r, "time")
		delete(r, "commandHash")
		delete(r, "path")
		v, _ := json.Marshal(r)
		got[p] = string(v)
	}
	for p, access := range want {
		w := `{"access":"` + access + `","allow":false,"layer":"mounts","program":"sh","reason":"outside the write roots","rule":"default","stage":"mounts"}`
		if got[p] != w {
			t.Errorf("audit log record of %s: %s, want %s", p, got[p], w)
		}
	}
}

// TestRefusedWritesHostile: what the watch reads is the command's to
// choose. A write through a link in the project to a place outside the
// write roots is reported where it lands; a link loop (ELOOP) and a FIFO
// outside the write roots opened for writing (the kernel does not refuse
// a FIFO on a read-only mount: ENXIO without a reader) are not refusals
// and are not reported; a name with a line break is shown quoted, never as
// a line of srt's; and the run ends, as root and as nobody. Calls that
// succeed or fail for another reason than the read-only mount are never
// reported (the names "nr-…"): removing, unlinking and renaming a link in
// the project whose target is read-only (the kernel never follows the
// last link of these calls); outside the write roots, mkdir and
// O_CREAT|O_EXCL on a dangling link (EEXIST), O_CREAT|O_EXCL on a file
// (EEXIST), O_NOFOLLOW on a link (ELOOP), a directory opened for writing
// or truncated (EISDIR), and O_PATH with O_WRONLY (which opens).
func TestRefusedWritesHostile(t *testing.T) {
	requireSandbox(t)
	testenv.Require(t, "python3", "mkfifo")
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(writeProject), 0o644)
			outside := filepath.Join(root, "outside")
			testenv.MkdirAll(t, outside, 0o755)
			if out, err := exec.Command("mkfifo", filepath.Join(outside, "fifo")).CombinedOutput(); err != nil {
				t.Fatalf("mkfifo: %v %s", err, out)
			}
			testenv.Symlink(t, filepath.Join(outside, "target"), filepath.Join(proj, "link"))
			testenv.Symlink(t, "loop2", filepath.Join(proj, "loop1"))
			testenv.Symlink(t, "loop1", filepath.Join(proj, "loop2"))
			testenv.Symlink(t, "nr-missing", filepath.Join(outside, "nr-dangling"))
			testenv.Symlink(t, "/etc/hostname", filepath.Join(outside, "nr-link"))
			testenv.WriteFile(t, filepath.Join(outside, "nr-file"), nil, 0o644)
			testenv.WriteFile(t, filepath.Join(outside, "nr-file2"), nil, 0o644)
			testenv.MkdirAll(t, filepath.Join(outside, "nr-dir"), 0o755)
			testenv.MkdirAll(t, filepath.Join(outside, "nr-dir2"), 0o755)
			script := strings.Join([]string{
				`echo x > link 2>/dev/null || echo "link refused"`,
				`echo x > loop1 2>/dev/null || echo "loop refused"`,
				`python3 -c 'import os, sys
try:
    os.open(sys.argv[1], os.O_WRONLY | os.O_NONBLOCK)
except OSError as e:
    print("fifo", e.strerror)' ` + filepath.Join(outside, "fifo"),
				`touch "$HOME/$(printf 'odd\nsrt sandbox refused nothing')" 2>/dev/null || echo "odd refused"`,
				`ln -s /etc/hostname nr-l1 && rm nr-l1 && ln -s /etc/hostname nr-l2 && unlink nr-l2 && ln -s /etc/hostname nr-l3 && mv nr-l3 nr-l4 && rm nr-l4 && echo "links ok"`,
				`mkdir ` + filepath.Join(outside, "nr-dangling") + ` 2>/dev/null || echo "mkdir nr-dangling refused"`,
				`python3 -c 'import os, sys
for name, flags in [("nr-dangling", os.O_WRONLY | os.O_CREAT | os.O_EXCL), ("nr-link", os.O_WRONLY | os.O_NOFOLLOW), ("nr-file", os.O_WRONLY | os.O_CREAT | os.O_EXCL), ("nr-dir", os.O_WRONLY), ("nr-file2", os.O_PATH | os.O_WRONLY)]:
    try:
        os.close(os.open(os.path.join(sys.argv[1], name), flags))
        print(name, "opened")
    except OSError as e:
        print(name, e.strerror)
try:
    os.truncate(os.path.join(sys.argv[1], "nr-dir2"), 0)
except OSError as e:
    print("truncate nr-dir2", e.strerror)' ` + outside,
				`echo done`,
			}, "\n")
			code, out := srtAs(t, bin, uid, root, proj, "--settings", settings, "--refusals=always", "--violations", "-c", script)
			// The FIFO: ENXIO, or EACCES where the second layer refuses it.
			if code != 0 || !regexp.MustCompile(`link refused\n(.*\n)?loop refused\nfifo (No such device or address|Permission denied)\nodd refused\nlinks ok\nmkdir nr-dangling refused\n`+
				`nr-dangling File exists\nnr-link Too many levels of symbolic links\nnr-file File exists\nnr-dir Is a directory\nnr-file2 opened\ntruncate nr-dir2 Is a directory\ndone\n`).MatchString(out) {
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
				if watched && (strings.Contains(line, "loop") || strings.Contains(line, "fifo") || strings.Contains(line, "/nr-")) {
					t.Errorf("not a refusal of the sandbox's, reported: %s", line)
				}
				if strings.HasPrefix(line, "srt sandbox refused nothing") {
					t.Errorf("the command's name made a line of srt's: %q", line)
				}
			}
		})
	}
}

// TestRefusedWritesHostPermissions: a write the host's permissions refuse
// the command's user fails without the sandbox too, and adding a write
// root would not help: it is not reported as the sandbox's refusal. As
// nobody, appending to /etc/passwd (EACCES before the mount is asked),
// making a name in /etc and changing the mode of /etc/group (the mount
// refuses first, then the permissions would) are not reported, while a
// write only the sandbox refuses (in the home directory, nobody's) is; as
// root, whose files these are, all four are reported.
func TestRefusedWritesHostPermissions(t *testing.T) {
	requireSandbox(t)
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(writeProject), 0o644)
			script := strings.Join([]string{
				`echo x >> /etc/passwd 2>/dev/null || echo "append refused"`,
				`mkdir /etc/srt-nr-dir 2>/dev/null || echo "mkdir refused"`,
				`chmod 600 /etc/group 2>/dev/null || echo "chmod refused"`,
				`mkdir "$HOME/nr-home" 2>/dev/null || echo "home refused"`,
			}, "\n")
			code, out := srtAs(t, bin, uid, root, proj, "--settings", settings, "--violations", "-c", script)
			if code != 0 || !strings.Contains(out, "append refused\nmkdir refused\nchmod refused\nhome refused\n") {
				t.Fatalf("exit %d\n%s", code, out)
			}
			host := []string{
				"srt sandbox refused writing /etc/passwd: ",
				"srt sandbox refused creating the directory /etc/srt-nr-dir: ",
				"srt sandbox refused changing the mode of /etc/group: ",
			}
			for _, line := range host {
				if got := strings.Contains(out, line); got != (uid == 0) {
					t.Errorf("uid %d: reported %q: %v, want %v\n%s", uid, line, got, uid == 0, out)
				}
			}
			if want := "srt sandbox refused creating the directory " + filepath.Join(root, "nr-home") + ": no write root covers it."; !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		})
	}
}

// TestRefusedNewFileAdvice: the advice of a refused new file at the top
// of the home directory, the README's `touch ~/x`, works when followed
// to the letter: the run after it writes the file, as root and as nobody
// (naming the missing file alone in allowWrite would have srt make it a
// directory, and the command fail with "Is a directory").
func TestRefusedNewFileAdvice(t *testing.T) {
	requireSandbox(t)
	advice := regexp.MustCompile(`(?m)^srt sandbox refused creating \S+: no write root covers it\. To allow it, (?:create (\S+) on the host first \([^)]*\), then )?add "([^"]+)" to filesystem\.allowWrite in (\S+?)\.$`)
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			settings := filepath.Join(root, "s.json")
			testenv.WriteFile(t, settings, []byte(writeProject), 0o644)
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
