//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/runtime/violations"
)

// TestRefusalsOnTerminal: run from a terminal, srt prints after the
// command one line per refused host, without being asked.
func TestRefusalsOnTerminal(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	os.MkdirAll(filepath.Join(dir, ".run"), 0o700)
	os.WriteFile(filepath.Join(dir, "v.json"), []byte(`{"network": {"allowedDomains": ["127.0.0.1"], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	s := startPTY(t, os.Args[0], dir, 0, cliEnv(dir), "--settings", "v.json", "-c", "curl -sS -o /dev/null https://pypi.org/; echo done")
	s.expect(`CONNECT tunnel failed, response 403`)
	s.expect(`done`)
	s.expect(`srt sandbox refused pypi\.org:443: it is not in network\.allowedDomains\. To allow it, add "pypi\.org" to network\.allowedDomains in v\.json\.`)
	if code := s.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestRefusalLines: one line per refused host, in the order refused, at
// most maxRefusalLines and a count of the rest; entries without an
// explanation (a quarantined file) are not repeated there.
func TestRefusalLines(t *testing.T) {
	var es []violations.Entry
	for i := range 14 {
		why := fmt.Sprintf("srt sandbox refused h%d.test:443: …", i)
		es = append(es, violations.Entry{Line: "deny network-outbound", Why: why}, violations.Entry{Line: "deny network-outbound", Why: why})
	}
	es = append([]violations.Entry{{Line: "deny file-write /x/.bashrc (…)"}}, es...)
	got := refusalLines(es)
	if len(got) != 11 || got[0] != "srt sandbox refused h0.test:443: …" || got[9] != "srt sandbox refused h9.test:443: …" ||
		got[10] != "srt sandbox refused 4 more hosts or writes (--violations lists every refusal)." {
		t.Errorf("refusalLines =\n%s", strings.Join(got, "\n"))
	}
	if got := refusalLines(nil); got != nil {
		t.Errorf("refusalLines(nil) = %q", got)
	}
}
