//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
	"srt.dev/internal/untrusted"
)

// TestInitStepProgram: srt starts srt-init beside it as the sandbox's
// first process when it is of srt's build, and srt-main otherwise (no
// srt-init, or one of another build); srt doctor says which.
func TestInitStepProgram(t *testing.T) {
	requireSandbox(t)
	bin := binDir
	other := t.TempDir()
	testenv.Chmod(t, other, 0o755)
	for _, name := range []string{"srt", "srt-main"} {
		data, err := os.ReadFile(filepath.Join(bin, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home := testDir(t)
	proj := filepath.Join(home, "proj")
	testenv.MkdirAll(t, proj, 0o755)
	settings := filepath.Join(proj, "s.json")
	testenv.WriteFile(t, settings, []byte(writeProject), 0o644)
	env := homeEnv(home)
	run := func(srt string, args ...string) string {
		t.Helper()
		cmd := exec.Command(srt, args...)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if err != nil && args[0] != "doctor" {
			t.Fatalf("%s %q: %v\n%s", srt, args, err, out)
		}
		return string(out)
	}
	for _, tc := range []struct {
		name, dir, initFile, want, doctor string
	}{
		{"srt-init of srt's build", bin, "", filepath.Join(bin, "srt-init"), "of srt's build"},
		{"no srt-init", other, "", filepath.Join(other, "srt-main"), "srt itself"},
		{"srt-init of no Go build", other, "#!/bin/sh\nexit 0\n", filepath.Join(other, "srt-main"), "srt itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.initFile != "" {
				testenv.WriteFile(t, filepath.Join(tc.dir, "srt-init"), []byte(tc.initFile), 0o755)
				defer os.Remove(filepath.Join(tc.dir, "srt-init"))
			}
			srt := filepath.Join(tc.dir, "srt")
			// The init step is not dumpable: the command cannot read its
			// /proc/1/exe, and srt says under --debug which program it is.
			out := run(srt, "--debug", "--settings", settings, "-c", "readlink /proc/1/exe || echo unreadable")
			if !strings.Contains(out, "unreadable") {
				t.Errorf("the command read /proc/1/exe:\n%s", out)
			}
			if !strings.Contains(out, `"init step: `+tc.want+`"`) {
				t.Errorf("the sandbox's first process is not %q:\n%s", tc.want, out)
			}
			doctor := run(srt, "doctor")
			line := ""
			for _, l := range strings.Split(doctor, "\n") {
				if strings.Contains(l, "init step") {
					line = l
				}
			}
			if !strings.Contains(line, tc.doctor) {
				t.Errorf("srt doctor says %q, want %q in it:\n%s", line, tc.doctor, doctor)
			}
		})
	}
}

// TestRootInAnotherUsersProject: srt run by root in a project another
// user owns (a CI container's checkout) runs, and says that the sandbox's
// root cannot create files there: bubblewrap, in a user namespace where
// only root is mapped, could not make mount points in it either, and
// srt no longer asks it to.
func TestRootInAnotherUsersProject(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("a project of another user's needs root to make; the other tests run as this user")
	}
	bin := binDir
	home := testDir(t)
	testenv.Chmod(t, home, 0o755)
	proj := filepath.Join(home, "proj")
	testenv.MkdirAll(t, proj, 0o755)
	settings := filepath.Join(home, "s.json")
	testenv.WriteFile(t, settings, []byte(writeProject), 0o644)
	if err := os.Chown(proj, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "srt"), "--settings", settings, "-c", "touch new && echo created; echo ran")
	cmd.Dir = proj
	cmd.Env = homeEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"ran", "belongs to uid 65534 and srt runs as root", "Permission denied"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "created") {
		t.Errorf("the sandbox's root created a file in another user's project:\n%s", out)
	}
	if entries, _ := os.ReadDir(proj); len(entries) != 0 {
		t.Errorf("the project holds %v after the run, want nothing (no mount point left)", entries)
	}
}

// TestForeignRootWarningQuoted: the warning about a write root of another
// user's shows the root quoted, when an allowWrite glob matches a name a
// sandboxed run made (ESC, CR, LF and a forged srt line in it).
func TestForeignRootWarningQuoted(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("a directory of another user's needs root to make; the other tests run as this user")
	}
	home := testDir(t)
	testenv.Chmod(t, home, 0o755)
	proj := filepath.Join(home, "proj")
	odd := "out\x1b[2K\r\nsrt: all clear"
	testenv.MkdirAll(t, filepath.Join(proj, odd), 0o755)
	testenv.Chown(t, filepath.Join(proj, odd), 65534, 65534)
	settings := filepath.Join(home, "s.json")
	testenv.WriteFile(t, settings, []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["out*"], "denyWrite": []}}`), 0o644)
	cmd := exec.Command(filepath.Join(binDir, "srt"), "--settings", settings, "-c", "echo ran")
	cmd.Dir = proj
	cmd.Env = homeEnv(home)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "srt: warning: " + untrusted.Quote(filepath.Join(proj, odd)) + " is a write root, but it belongs to uid 65534"
	if !strings.Contains(string(out), want) || strings.ContainsAny(string(out), "\x1b\r") || strings.Contains(string(out), "\nsrt: all clear") {
		t.Errorf("output lacks %q, or shows the name raw:\n%q", want, out)
	}
}

// homeEnv is the environment of a real srt run by a user whose home is
// home, with nothing of this one but srtc's path.
func homeEnv(home string) []string {
	return append([]string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR=/tmp", "SRTC=" + os.Getenv("SRTC"),
		"XDG_RUNTIME_DIR=" + filepath.Join(home, ".run"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(home, ".state")}, warmSetting()...)
}
