package netpolicy

import (
	"context"
	"strings"
	"testing"
)

// TestExplainByCause: the explanation follows the decision's cause, not
// its text. A deniedDomainReasons text, or a prompt's answer, that spells
// the fixed text of another cause keeps its own explanation, and the
// refusal still shows the text as written.
func TestExplainByCause(t *testing.T) {
	base := func() *Rules {
		r := rules(t, []string{"github.com"}, []string{"evil.test", "gone.test", "off.test", "plain.test"})
		r.DeniedReasons = map[string]string{
			"evil.test": "malformed host",
			"gone.test": "sandbox policy unavailable",
			"off.test":  "host is not on the allow list",
		}
		r.Source = "s.json"
		return r
	}
	deny := func(entry string) string {
		return `srt sandbox refused ` + entry + `:443: it matches "` + entry + `" in network.deniedDomains, which wins over network.allowedDomains. To allow it, remove that entry from network.deniedDomains in s.json.`
	}
	prompt := func(host, answer string) string {
		return `srt sandbox refused ` + host + `:443: it is not in network.allowedDomains and the permission prompt refused it ("` + answer + `"). To allow it, add "` + host + `" to network.allowedDomains in s.json.`
	}
	tests := []struct {
		name, host string
		answer     string // the prompt's answer; "" installs no prompt
		cause      Cause
		reason     string
		why        string
	}{
		{"deny text spelling malformed", "evil.test", "", CauseDenyList, "malformed host", deny("evil.test")},
		{"deny text spelling unavailable", "gone.test", "", CauseDenyList, "sandbox policy unavailable", deny("gone.test")},
		{"deny text spelling not allowed", "off.test", "", CauseDenyList, "host is not on the allow list", deny("off.test")},
		{"deny without text", "plain.test", "", CauseDenyList, "host is on the deny list", deny("plain.test")},
		{"prompt answer spelling malformed", "vm.test", "malformed host", CauseUserDenied, "malformed host", prompt("vm.test", "malformed host")},
		{"prompt answer spelling not allowed", "vm.test", "host is not on the allow list", CauseUserDenied, "host is not on the allow list", prompt("vm.test", "host is not on the allow list")},
		{"prompt answer spelling ask failed", "vm.test", "permission prompt failed", CauseUserDenied, "permission prompt failed", prompt("vm.test", "permission prompt failed")},
		{"prompt answer spelling unavailable", "vm.test", "sandbox policy unavailable", CauseUserDenied, "sandbox policy unavailable", prompt("vm.test", "sandbox policy unavailable")},
		{"not allowed", "vm.test", "", CauseNotAllowed, "host is not on the allow list",
			`srt sandbox refused vm.test:443: it is not in network.allowedDomains. To allow it, add "vm.test" to network.allowedDomains in s.json.`},
		{"malformed", "a b", "", CauseMalformed, "malformed host",
			`srt sandbox refused "a b":443: the host name is malformed, and no setting allows it.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			if tt.answer != "" {
				r.Ask = func(context.Context, string, int) (bool, string, error) { return false, tt.answer, nil }
			}
			d := Decide(context.Background(), r, tt.host, 443, "")
			if d.Allow || d.Cause != tt.cause || d.Reason != tt.reason {
				t.Errorf("Decide(%s) = %+v, want cause %v, reason %q", tt.host, d, tt.cause, tt.reason)
			}
			if got := Explain(r, d, tt.host, 443); got != tt.why {
				t.Errorf("Explain(%s) = %q\nwant %q", tt.host, got, tt.why)
			}
		})
	}
}

// TestExplainQuotesWhatTheCommandSent: a host the command sent that is
// not a plain word, and a prompt's answer, are shown Go-quoted: no
// control, line break or bidirectional override of theirs reaches the
// line, which stays one line of srt's. A host name, an IPv6 literal and a
// one-word answer read as they are.
func TestExplainQuotesWhatTheCommandSent(t *testing.T) {
	r := rules(t, []string{"github.com"}, nil)
	r.Source = "s.json"
	tests := []struct{ name, host, answer, want string }{
		{"SOCKS5 name with ESC, CR and LF", "\x1b[2K\rsrt: all clear\n", "",
			`srt sandbox refused "\x1b[2K\rsrt: all clear\n":443: the host name is malformed, and no setting allows it.`},
		{"right-to-left override", "moc.\u202elive", "",
			`srt sandbox refused "moc.\u202elive":443: the host name is malformed, and no setting allows it.`},
		{"not UTF-8", "a\xff.test", "",
			`srt sandbox refused "a\xff.test":443: the host name is malformed, and no setting allows it.`},
		{"host name", "pypi.org", "",
			`srt sandbox refused pypi.org:443: it is not in network.allowedDomains. To allow it, add "pypi.org" to network.allowedDomains in s.json.`},
		{"IPv6 literal", "[2001:db8::1]", "",
			`srt sandbox refused [2001:db8::1]:443: it is not in network.allowedDomains. To allow it, add "[2001:db8::1]" to network.allowedDomains in s.json.`},
		{"localhost", "localhost", "",
			`srt sandbox refused localhost:443: it is not in network.allowedDomains. To allow it, add "localhost:443" to network.allowedDomains in s.json.`},
		{"IPv6 loopback", "[::1]", "",
			`srt sandbox refused [::1]:443: it is not in network.allowedDomains. To allow it, add "[::1]:443" to network.allowedDomains in s.json.`},
		{"127.0.0.1 spelled short", "127.1", "",
			`srt sandbox refused 127.0.0.1:443: it is not in network.allowedDomains. To allow it, add "127.0.0.1:443" to network.allowedDomains in s.json.`},
		{"one-word answer", "vm.test", "no",
			`srt sandbox refused vm.test:443: it is not in network.allowedDomains and the permission prompt refused it (no). To allow it, add "vm.test" to network.allowedDomains in s.json.`},
		{"answer of words", "vm.test", "the user said no\u202e",
			`srt sandbox refused vm.test:443: it is not in network.allowedDomains and the permission prompt refused it ("the user said no"). To allow it, add "vm.test" to network.allowedDomains in s.json.`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.Ask = nil
			if tt.answer != "" {
				r.Ask = func(context.Context, string, int) (bool, string, error) { return false, tt.answer, nil }
			}
			d := Decide(context.Background(), r, tt.host, 443, "")
			if got := Explain(r, d, tt.host, 443); got != tt.want {
				t.Errorf("Explain(%q) = %q\nwant %q", tt.host, got, tt.want)
			}
		})
	}
}

// TestEveryCause: each cause has its own text and its own explanation;
// none reaches the fallbacks meant for a value outside Causes.
func TestEveryCause(t *testing.T) {
	texts := map[string]Cause{}
	whys := map[string]Cause{}
	for _, c := range Causes() {
		text := c.Text()
		if strings.HasPrefix(text, "cause ") || strings.HasPrefix(c.String(), "Cause(") {
			t.Errorf("cause %d has no text or name of its own: %q, %q", c, text, c)
		}
		if o, dup := texts[text]; dup {
			t.Errorf("causes %v and %v share the text %q", o, c, text)
		}
		texts[text] = c
		why := Explain(nil, Decision{Allow: c == CauseNone, Host: "h.test", Cause: c, Reason: text}, "h.test", 443)
		if strings.HasSuffix(why, "("+text+").") && c != CauseUserDenied {
			t.Errorf("Explain(%v) fell through: %q", c, why)
		}
		if o, dup := whys[why]; dup {
			t.Errorf("causes %v and %v share the explanation %q", o, c, why)
		}
		whys[why] = c
	}
	if got := Explain(nil, Decision{Host: "h.test", Cause: Cause(200), Reason: "odd"}, "h.test", 443); got != "srt sandbox refused h.test:443 (odd)." {
		t.Errorf("Explain(unknown cause) = %q", got)
	}
}
