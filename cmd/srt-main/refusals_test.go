//go:build linux

package main

import (
	"fmt"
	"path/filepath"
	"srt.dev/cmd/internal/cmdline"
	"strings"
	"testing"

	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/violations"
)

// TestRefusalsOnTerminal: with --refusals auto, srt run from a terminal
// prints after the command one line per refused host (srt_refusals.txtar:
// and nothing when stderr is not one).
func TestRefusalsOnTerminal(t *testing.T) {
	requireSandbox(t)
	dir := project(t)
	testenv.MkdirAll(t, filepath.Join(dir, ".run"), 0o700)
	testenv.WriteFile(t, filepath.Join(dir, "v.json"), []byte(`{"network": {"allowedDomains": ["127.0.0.1"], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`), 0o644)
	s := startPTY(t, srtBin, dir, 0, cliEnv(dir), "--settings", "v.json", "--refusals", "auto", "-c", "curl -sS -o /dev/null https://pypi.org/; echo done")
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
	for _, l := range got {
		if !strings.HasPrefix(l, netpolicy.RefusedPrefix) {
			t.Errorf("%q does not start with %q", l, netpolicy.RefusedPrefix)
		}
	}
	if got := refusalLines(nil); got != nil {
		t.Errorf("refusalLines(nil) = %q", got)
	}
}

// TestRefusalsOption: --refusals WHEN, --refusals=WHEN and a bare
// --refusals (always), which leaves a word that is no WHEN to the
// command; SRT_REFUSALS when the option is not given; always by default.
func TestRefusalsOption(t *testing.T) {
	tests := []struct {
		args []string
		env  string
		when string
		argv []string
		err  string
	}{
		{args: []string{"echo", "hi"}, when: "always", argv: []string{"echo", "hi"}},
		{args: []string{"--refusals", "echo", "hi"}, when: "always", argv: []string{"echo", "hi"}},
		{args: []string{"--refusals", "never", "echo"}, when: "never", argv: []string{"echo"}},
		{args: []string{"--refusals", "auto", "--", "never"}, when: "auto", argv: []string{"never"}},
		{args: []string{"--refusals=never", "echo"}, when: "never", argv: []string{"echo"}},
		{args: []string{"--refusals", "--", "echo"}, when: "always", argv: []string{"echo"}},
		{args: []string{"--refusals"}, when: "always"},
		{args: []string{"echo"}, env: "never", when: "never", argv: []string{"echo"}},
		{args: []string{"--refusals", "echo"}, env: "never", when: "always", argv: []string{"echo"}},
		{args: []string{"--refusals=auto", "echo"}, env: "never", when: "auto", argv: []string{"echo"}},
		{args: []string{"--refusals=", "echo"}, err: `--refusals must be always, never or auto, not ""`},
		{args: []string{"--refusals=sometimes", "echo"}, err: `--refusals must be always, never or auto, not "sometimes"`},
		{args: []string{"echo"}, env: "off", err: `SRT_REFUSALS must be always, never or auto, not "off"`},
	}
	for _, tt := range tests {
		o, err := cmdline.Parse(tt.args, cmdline.Commands[0])
		when := ""
		if err == nil {
			when, err = refusalsWhen(o.Refusals, func(k string) string {
				if k == refusalsEnv {
					return tt.env
				}
				return ""
			})
		}
		switch {
		case tt.err != "":
			if err == nil || err.Error() != tt.err {
				t.Errorf("srt %q (SRT_REFUSALS=%s): error %v, want %q", tt.args, tt.env, err, tt.err)
			}
		case err != nil:
			t.Errorf("srt %q (SRT_REFUSALS=%s): %v", tt.args, tt.env, err)
		case when != tt.when || strings.Join(o.Argv, " ") != strings.Join(tt.argv, " "):
			t.Errorf("srt %q (SRT_REFUSALS=%s) = %s %q, want %s %q", tt.args, tt.env, when, o.Argv, tt.when, tt.argv)
		}
	}
}
