package resolve

import (
	"strings"
	"testing"

	"srt.dev/emit/bwrap"
)

// TestLines: every resolved word names the line of linux/bwrap.args it
// came from, and the file-system mounts name the directive behind them.
func TestLines(t *testing.T) {
	home, cwd := project(t)
	p, err := bwrap.Parse(bwrap.Plan{Steps: plan(t, `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": ["./secrets"]}}`)}.Render())
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	res, err := Resolve(p.Steps, Host{Home: home, Cwd: cwd, TmpDir: tmp, EmptyDir: t.TempDir(), SeccompFD: 3, ProxyEnv: []string{"HTTP_PROXY=x"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Lines) != len(res.Args) {
		t.Fatalf("%d lines for %d words", len(res.Lines), len(res.Args))
	}
	lineOf := func(prefix string) int {
		for _, s := range p.Steps {
			if s.Args == nil && strings.HasPrefix(string(s.Directive)+" "+s.Operand, prefix) {
				return s.Line
			}
			if s.Args != nil && strings.Join(s.Args, " ") == prefix {
				return s.Line
			}
		}
		t.Fatalf("no step %q", prefix)
		return 0
	}
	for _, tt := range []struct {
		words []string
		line  int
	}{
		{[]string{"--tmpfs", home + "/.ssh"}, lineOf("deny-read ${HOME}/.ssh")},
		{[]string{"--bind", cwd, cwd}, lineOf("allow-write ${CWD}")},
		{[]string{"--bind", tmp, "/tmp/claude"}, lineOf("private-tmp /tmp/claude")},
		{[]string{"--ro-bind", cwd + "/secrets", cwd + "/secrets"}, lineOf("deny-write ${CWD}/secrets")},
		{[]string{"--ro-bind", cwd + "/.git/config", cwd + "/.git/config"}, lineOf("mandatory-scan")},
		{[]string{"--setenv", "HTTP_PROXY", "x"}, lineOf("proxy-env")},
		{[]string{"--seccomp", "3"}, lineOf("seccomp")},
		{[]string{"--unshare-net"}, lineOf("--unshare-net")},
	} {
		i := index(res.Args, tt.words)
		if i < 0 {
			t.Errorf("no %q in %q", tt.words, res.Args)
			continue
		}
		for j := range tt.words {
			if res.Lines[i+j] != tt.line || tt.line == 0 {
				t.Errorf("%q from line %d, want %d", tt.words, res.Lines[i+j], tt.line)
			}
		}
	}
}

func index(args, words []string) int {
	for i := 0; i+len(words) <= len(args); i++ {
		match := true
		for j, w := range words {
			match = match && args[i+j] == w
		}
		if match {
			return i
		}
	}
	return -1
}

// TestUnknownSteps: a directive or qualifier this runtime does not know is
// refused, with its line, rather than skipped.
func TestUnknownSteps(t *testing.T) {
	h := Host{Home: "/home/u", Cwd: "/home/u/p", SeccompFD: 3}
	for _, tt := range []struct{ plan, want string }{
		{"--ro-bind / /\n@kernel-mystery /x\n", "line 2: unknown step @kernel-mystery: this srt does not know it"},
		{"--ro-bind / /\n\n@deny-read:sometimes /x\n", "line 3: unknown step @deny-read:sometimes: @deny-read takes no :sometimes"},
		{"@proxy-env:pattern\n", "line 1: unknown step @proxy-env:pattern"},
	} {
		p, err := bwrap.Parse([]byte(tt.plan))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Resolve(p.Steps, h)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Resolve(%q) = %v, want %q", tt.plan, err, tt.want)
		}
	}
}
