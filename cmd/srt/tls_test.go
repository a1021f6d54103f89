//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTLSTerminateAndMask: srt with tlsTerminate gives the command a
// readable trust bundle in the CA variables, gone after the run; a masked
// variable is a sentinel, and an unset one stops srt before the command.
func TestTLSTerminateAndMask(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": ["example.com"], "deniedDomains": [], "tlsTerminate": {}},
		"credentials": {"envVars": [{"name": "SRT_TEST_TOKEN", "mode": "mask"}]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	real := "tok_0123456789abcdefghijklmnopqrstuvwxyz"
	t.Setenv("SRT_TEST_TOKEN", real)
	code, out, errOut := srt(t, dir, "", "-s", "s.json", "-c", `echo "$SRT_TEST_TOKEN"; echo "$SSL_CERT_FILE $GIT_SSL_CAINFO"; head -1 "$SSL_CERT_FILE"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "fake_value_") || len(lines[0]) != max(len(real), 47) || lines[2] != "-----BEGIN CERTIFICATE-----" {
		t.Fatalf("got %q", out)
	}
	bundle := strings.Fields(lines[1])
	if len(bundle) != 2 || bundle[0] != bundle[1] {
		t.Fatalf("CA variables: %q", lines[1])
	}
	if _, err := os.Stat(bundle[0]); !os.IsNotExist(err) {
		t.Errorf("the trust bundle outlives the run: %v", err)
	}
	os.Unsetenv("SRT_TEST_TOKEN")
	code, _, errOut = srt(t, dir, "", "-s", "s.json", "-c", "true")
	if code != 1 || !strings.Contains(errOut, "credentials.envVars[0] (s.json:2:") || !strings.Contains(errOut, "SRT_TEST_TOKEN is masked but not set") {
		t.Errorf("unset masked variable: %d %q", code, errOut)
	}
}

// TestKilledTLS: the trust bundle of a run whose srt was killed with
// SIGKILL is removed by the reaper.
func TestKilledTLS(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": [], "tlsTerminate": {}}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	cmd, out := cli(t, dir, "--settings", "s.json", "-c", `echo "$SSL_CERT_FILE"; sleep 14.142`)
	line, _ := out.ReadString('\n')
	bundle := strings.TrimSpace(line)
	if _, err := os.Stat(bundle); err != nil || !strings.HasPrefix(bundle, filepath.Join(dir, ".run")) {
		t.Fatalf("bundle %q: %v", bundle, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Dir(bundle)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the trust bundle's directory is left after srt was killed: %s", filepath.Dir(bundle))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
