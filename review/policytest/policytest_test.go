package policytest

import (
	"strings"
	"testing"

	"srt.dev/review/query"
	"srt.dev/review/source"
	"srt.dev/schema"
)

func TestParseErrors(t *testing.T) {
	_, err := Parse("t.test", []byte("read ~/.ssh: deny\nread ~/x\nfly ~/x: allow\n[bsd] read /: allow\nconnect a.com:99999: allow\nread /x: maybe\n"))
	if err == nil {
		t.Fatal("Parse accepted malformed lines")
	}
	for _, want := range []string{"t.test:2: no verdict", "t.test:3: unknown verb \"fly\"", "t.test:4: unknown target", "t.test:5:", "t.test:6: verdict \"maybe\""} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestRun(t *testing.T) {
	src, diags, err := source.Load("s.json", []byte(`{"network": {"allowedDomains": ["github.com"], "deniedDomains": [], "allowUnixSockets": ["/run/a.sock"]},
		"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	as, err := Parse("t.test", []byte(`# comment
read ~/.ssh/id_rsa: deny
write ./src/x: allow
connect github.com:443: allow
connect evil.com: allow
[macos] unix-socket /run/a.sock: allow
[linux] unix-socket /run/a.sock: allow
`))
	if err != nil {
		t.Fatal(err)
	}
	rs := Run(src.Evaluator("", ""), as, query.Targets)
	var failed []string
	for _, r := range rs {
		if !r.Pass {
			failed = append(failed, string(r.Target)+" "+r.Text+" ("+r.Got.Rule.Key+")")
		}
	}
	want := []string{"linux connect evil.com: allow (default)", "macos connect evil.com: allow (default)", "windows connect evil.com: allow (default)", "linux [linux] unix-socket /run/a.sock: allow (default)"}
	if strings.Join(failed, "\n") != strings.Join(want, "\n") {
		t.Errorf("failed:\n%s\nwant:\n%s", strings.Join(failed, "\n"), strings.Join(want, "\n"))
	}
	if len(rs) != 3*4+2 {
		t.Errorf("%d results, want 14", len(rs))
	}
}
