//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// TestAllowWriteMissing: an allowWrite directory that does not exist yet
// under the home directory (npm's cache on a fresh machine) is created
// before the run, and srt says so on stderr without --debug; one that srt
// does not create (outside the home and working directories) is named on
// stderr as not writable.
func TestAllowWriteMissing(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	elsewhere := filepath.Join(t.TempDir(), "absent", "cache")
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": [".", "~/.npm", "./out/logs", "`+elsewhere+`"], "denyWrite": []}}`), 0o644)
	code, out, errOut := srt(t, dir, "", "-s", "s.json", "-c", `mkdir -p ~/.npm/_cacache && echo cached > ~/.npm/_cacache/x && echo log > out/logs/l && echo ok; touch `+elsewhere+`/f || echo "not writable"`)
	if code != 0 || !strings.Contains(out, "ok\n") || !strings.Contains(out, "not writable") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".npm", "_cacache", "x")); err != nil || string(b) != "cached\n" {
		t.Errorf("~/.npm/_cacache/x on the host: %q %v", b, err)
	}
	for _, want := range []string{
		"srt: created " + filepath.Join(dir, ".npm") + " for filesystem.allowWrite[1] (s.json:2:",
		"srt: created " + filepath.Join(dir, "out", "logs") + " for filesystem.allowWrite[2]",
		"srt: filesystem.allowWrite[3] (s.json:2:",
		elsewhere + " does not exist, so the command cannot write it (srt creates only directories below the home and working directories)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// The next run finds them: nothing more to say.
	code, _, errOut = srt(t, dir, "", "-s", "s.json", "-c", "true")
	if code != 0 || strings.Contains(errOut, "created") {
		t.Errorf("second run: exit %d, stderr %s", code, errOut)
	}
}

// TestAllowWriteMissingThroughLink: srt does not create a directory
// through a symbolic link in the project, and refuses to bind a write
// root reached through one.
func TestAllowWriteMissingThroughLink(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	target := t.TempDir()
	testenv.Symlink(t, target, filepath.Join(dir, "link"))
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": ["./link/made"], "denyWrite": []}}`), 0o644)
	code, _, errOut := srt(t, dir, "", "-s", "s.json", "-c", "true")
	if code != 1 || !strings.Contains(errOut, filepath.Join(dir, "link")+" is a symbolic link or not a directory") || !strings.Contains(errOut, "reached through a symbolic link: "+filepath.Join(dir, "link")+" -> "+target) {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(target, "made")); err == nil {
		t.Errorf("srt made a directory through the link")
	}
}

// TestCwdHidden: a working directory that a denyRead hides is refused
// with what happened and what to do, not bubblewrap's "Can't chdir".
func TestCwdHidden(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.WriteFile(t, filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["~"], "allowWrite": [], "denyWrite": []}}`), 0o644)
	code, _, errOut := srt(t, dir, "", "-s", "s.json", "-c", "true")
	if code == 0 || !strings.Contains(errOut, "the working directory "+dir+" is hidden by filesystem.denyRead[0] (s.json:2:") || strings.Contains(errOut, "chdir") {
		t.Errorf("exit %d, stderr %s", code, errOut)
	}
}

// TestSrtcMissing: SRTC naming no program is said in one line, without a
// dangling ": " for an empty message.
func TestSrtcMissing(t *testing.T) {
	dir := project(t)
	t.Setenv("SRTC", filepath.Join(dir, "missing"))
	code, _, errOut := srt(t, dir, "", "-c", "true")
	want := "Error: SRTC=" + filepath.Join(dir, "missing") + " is not an executable file: set SRTC to srtc's path, or unset it to use the srtc beside srt or on PATH\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
	}
	// An srtc that fails without a word.
	silent := filepath.Join(dir, "silent")
	testenv.WriteFile(t, silent, []byte("#!/bin/sh\nexit 3\n"), 0o755)
	t.Setenv("SRTC", silent)
	code, _, errOut = srt(t, dir, "", "-c", "true")
	if code != 1 || strings.HasSuffix(strings.TrimRight(errOut, "\n"), ":") || !strings.Contains(errOut, "running "+silent+": exit status 3") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestProjectSettingsNotice: run without --settings in a project whose
// .srt-settings.json srt does not use (in the working directory, or at
// the top of its git working tree), srt says so once, naming the file in
// use and the command that uses the project's; not with --settings, and
// not when the project's file is the one in use (the home directory).
func TestProjectSettingsNotice(t *testing.T) {
	requireSandbox(t)
	home, proj := testDir(t), testDir(t)
	testenv.MkdirAll(t, filepath.Join(proj, ".git"), 0o755)
	testenv.MkdirAll(t, filepath.Join(proj, "sub"), 0o755)
	testenv.WriteFile(t, filepath.Join(proj, ".srt-settings.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
	run := func(dir string, args ...string) (int, string, string) {
		t.Helper()
		code, out, errOut := srtHome(t, home, dir, args...)
		if code != 0 {
			t.Fatalf("srt %q in %s: exit %d\n%s", args, dir, code, errOut)
		}
		return code, out, errOut
	}
	notice := func(file, using, command string) string {
		review := "srtc explain " + file + " (what it allows)"
		if filepath.IsAbs(using) {
			review += ", srtc diff " + using + " " + file + " (what it allows beyond the file in use)"
		}
		return "srt: this project's " + file + " is not in use: srt runs with " + using + ", and reads a project's settings file only when --settings names it, so that a checkout cannot choose its own policy. Review it before using it: " + review + ". To use it: " + command + "\n"
	}
	defaults := "the built-in defaults (there is no ~/.srt-settings.json)"
	_, out, errOut := run(proj, "-c", "(echo x > made) 2>/dev/null || echo refused")
	// The refused write names the file in use too.
	refusal := "srt sandbox refused creating " + filepath.Join(proj, "made") + `: no write root covers it. To allow it, add "." to filesystem.allowWrite in ~/.srt-settings.json (none exists: the built-in defaults apply).` + "\n"
	if want := notice("./.srt-settings.json", defaults, `srt --settings ./.srt-settings.json -c '(echo x > made) 2>/dev/null || echo refused'`) + refusal; errOut != want || out != "refused\n" {
		t.Errorf("in the project: stdout %q, stderr:\n%s\nwant:\n%s", out, errOut, want)
	}
	// The command it names runs with the project's file.
	if _, out, errOut := run(proj, "--settings", "./.srt-settings.json", "-c", "echo x > made && echo made"); errOut != "" || out != "made\n" {
		t.Errorf("with --settings: stdout %q, stderr %q", out, errOut)
	}
	// Below the top of the git working tree.
	if _, _, errOut := run(filepath.Join(proj, "sub"), "echo", "it's"); errOut != notice("../.srt-settings.json", defaults, `srt --settings ../.srt-settings.json echo 'it'\''s'`) {
		t.Errorf("in a subdirectory: %q", errOut)
	}
	// With ~/.srt-settings.json, the notice names it.
	testenv.WriteFile(t, filepath.Join(home, ".srt-settings.json"), []byte(noNetwork), 0o644)
	if _, _, errOut := run(proj, "true"); errOut != notice("./.srt-settings.json", filepath.Join(home, ".srt-settings.json"), "srt --settings ./.srt-settings.json true") {
		t.Errorf("with ~/.srt-settings.json: %q", errOut)
	}
	// A project's file that is the one in use: nothing to say.
	own := testDir(t)
	testenv.WriteFile(t, filepath.Join(own, ".srt-settings.json"), []byte(noNetwork), 0o644)
	if _, _, errOut := srtHome(t, own, own, "true"); errOut != "" {
		t.Errorf("the home directory's own file: %q", errOut)
	}
}

// srtHome runs srt in dir with HOME home.
func srtHome(t *testing.T, home, dir string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runSrt(t, srtCmd(t, dir, []string{"HOME=" + home}, args...), "")
}
