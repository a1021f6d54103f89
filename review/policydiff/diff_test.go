package policydiff

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/review/query"
	"srt.dev/review/source"
	"srt.dev/schema"
)

func load(t *testing.T, settings string) *query.Source {
	t.Helper()
	src, diags, err := source.Load("s.json", []byte(settings), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatalf("Load: %v %v", err, diags)
	}
	return src
}

const base = `{"network": {"allowedDomains": ["github.com"], "deniedDomains": []},
	"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`

func summary(cs []Change) []string {
	var out []string
	for _, c := range cs {
		dir := "stricter"
		if c.Wider {
			dir = "wider"
		}
		out = append(out, fmt.Sprintf("%s %s %s %s by %s", c.Target, dir, c.Kind, c.Subject, c.New.Rule.Key))
	}
	sort.Strings(out)
	return out
}

func TestDiff(t *testing.T) {
	tests := []struct {
		name, new string
		want      []string
	}{
		{"same policy, other spelling", `{"network": {"deniedDomains": [], "allowedDomains": ["GitHub.com"]},
	"filesystem": {"allowWrite": ["./"], "denyRead": ["~/.ssh/"], "denyWrite": []}}`, nil},
		{"a read deny dropped", `{"network": {"allowedDomains": ["github.com"], "deniedDomains": []},
	"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`, []string{
			"linux wider read ${HOME}/.ssh by default", "macos wider read ${HOME}/.ssh by default", "windows wider read ${HOME}/.ssh by default"}},
		// Depth 1: only the names directly in the working directory stay
		// protected, and not even its .git/hooks (the scan's rule for
		// directories is parent level <= depth-2).
		{"search depth lowered", `{"network": {"allowedDomains": ["github.com"], "deniedDomains": []},
	"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}, "mandatoryDenySearchDepth": 1}`, []string{
			"linux wider write ${CWD}/.git/commondir/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/.git/config.worktree/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/.git/config/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/.git/hooks/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/.git/worktrees/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.bash_profile by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.bashrc by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.claude/agents/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.claude/commands/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.git/commondir/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.git/config.worktree/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.git/config/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.git/hooks/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.git/worktrees/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.gitconfig by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.gitmodules by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.idea/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.mcp.json by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.profile by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.ripgreprc by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.vscode/x by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.zprofile by filesystem.allowWrite[0]",
			"linux wider write ${CWD}/a/.zshrc by filesystem.allowWrite[0]"}},
		{"a host added, a write root narrowed", `{"network": {"allowedDomains": ["github.com", "*.npmjs.org"], "deniedDomains": []},
	"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["./src"], "denyWrite": []}}`, nil},
		{"unix sockets: wider on macOS only", `{"network": {"allowedDomains": ["github.com"], "deniedDomains": [], "allowUnixSockets": ["/var/run/docker.sock"]},
	"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`, []string{
			"macos wider unix-socket /var/run/docker.sock by network.allowUnixSockets[0]"}},
		{"nested namespaces: Linux only", `{"network": {"allowedDomains": ["github.com"], "deniedDomains": []},
	"filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}, "allowNestedUserNamespaces": true}`, []string{
			"linux wider process nested user namespaces by allowNestedUserNamespaces"}},
	}
	old := load(t, base)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Diff(old, load(t, tc.new), query.Targets)
			if tc.name == "a host added, a write root narrowed" {
				// Checked by shape below: the host is wider everywhere, the
				// write root stricter everywhere.
				wider, stricter := 0, 0
				for _, c := range got {
					switch {
					case c.Wider && c.Kind == "connect":
						wider++
					case !c.Wider && c.Kind == "write":
						stricter++
					default:
						t.Errorf("unexpected change %+v", c)
					}
				}
				if wider == 0 || stricter == 0 || !Wider(got) {
					t.Errorf("wider=%d stricter=%d, want both > 0", wider, stricter)
				}
				return
			}
			if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if Wider(got) != (len(tc.want) > 0) {
				t.Errorf("Wider = %v", Wider(got))
			}
		})
	}
}

func TestSample(t *testing.T) {
	for in, want := range map[string]string{"${CWD}/**/.env": "${CWD}/.env", "/data/*.pem": "/data/x.pem", "/a/[bc]?": "/a/bx"} {
		if got := sample(in); got != want {
			t.Errorf("sample(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDiffSwitchesAndEnv: a variable no longer removed, a resolved-address
// range no longer refused and a new switch are wider; the reverse is
// stricter.
func TestDiffSwitchesAndEnv(t *testing.T) {
	a := load(t, `{"network": {"allowedDomains": [], "deniedDomains": [], "deniedResolvedAddresses": ["10.0.0.0/8"]},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "credentials": {"envVars": [{"name": "GITHUB_TOKEN", "mode": "deny"}]}}`)
	b := load(t, `{"network": {"allowedDomains": [], "deniedDomains": []}, "allowNestedUserNamespaces": true,
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}}`)
	want := []string{
		"linux wider env GITHUB_TOKEN by default",
		"linux wider process nested user namespaces by allowNestedUserNamespaces",
		"linux wider resolved-address 10.0.0.0/8 by default",
	}
	if diff := cmp.Diff(want, summary(Diff(a, b, []query.Target{query.Linux}))); diff != "" {
		t.Errorf("a -> b (-want +got):\n%s", diff)
	}
	back := Diff(b, a, []query.Target{query.Linux})
	if Wider(back) || len(back) != 3 {
		t.Errorf("b -> a = %v, want 3 stricter changes", summary(back))
	}
}

// TestDiffInjectScope: a masked credential whose real value now goes to
// more hosts is a wider change, host by host.
func TestDiffInjectScope(t *testing.T) {
	a := load(t, `{"network": {"allowedDomains": ["api.github.com", "pypi.org"], "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask", "injectHosts": ["api.github.com"]}]}}`)
	b := load(t, `{"network": {"allowedDomains": ["api.github.com", "pypi.org"], "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"credentials": {"envVars": [{"name": "GH_TOKEN", "mode": "mask"}]}}`)
	want := []string{"linux wider inject GH_TOKEN -> pypi.org by credentials.envVars[0]"}
	if diff := cmp.Diff(want, summary(Diff(a, b, []query.Target{query.Linux}))); diff != "" {
		t.Errorf("a -> b (-want +got):\n%s", diff)
	}
	back := Diff(b, a, []query.Target{query.Linux})
	if Wider(back) || len(back) != 1 {
		t.Errorf("b -> a = %v, want 1 stricter change", summary(back))
	}
}

// TestDiffBodyInject: a host added to a credential's bodyInjectHosts
// (one named, and one under a wildcard) is a wider change, host by host;
// taking it out again is stricter. A host that is no inject host of the
// credential any more gets its value nowhere, bodies included.
func TestDiffBodyInject(t *testing.T) {
	policy := func(inject, body string) *query.Source {
		return load(t, `{"network": {"allowedDomains": ["api.example.com", "uploads.example.com", "*.cdn.example.com"], "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"credentials": {"envVars": [{"name": "TOKEN", "mode": "mask", "injectHosts": `+inject+body+`}]}}`)
	}
	all := `["api.example.com", "uploads.example.com", "*.cdn.example.com"]`
	a := policy(all, ``)
	b := policy(all, `, "bodyInjectHosts": ["uploads.example.com", "*.cdn.example.com"]`)
	want := []string{
		"linux wider inject-body TOKEN -> srt-probe.cdn.example.com by credentials.envVars[0].bodyInjectHosts[1]",
		"linux wider inject-body TOKEN -> uploads.example.com by credentials.envVars[0].bodyInjectHosts[0]",
	}
	if diff := cmp.Diff(want, summary(Diff(a, b, []query.Target{query.Linux}))); diff != "" {
		t.Errorf("a -> b (-want +got):\n%s", diff)
	}
	back := Diff(b, a, []query.Target{query.Linux})
	if Wider(back) || len(back) != 2 {
		t.Errorf("b -> a = %v, want 2 stricter changes", summary(back))
	}
	c := policy(`["api.example.com", "*.cdn.example.com"]`, `, "bodyInjectHosts": ["*.cdn.example.com"]`)
	want = []string{
		"linux stricter inject TOKEN -> uploads.example.com by credentials.envVars[0]",
		"linux stricter inject-body TOKEN -> uploads.example.com by credentials.envVars[0]",
	}
	if diff := cmp.Diff(want, summary(Diff(b, c, []query.Target{query.Linux}))); diff != "" {
		t.Errorf("b -> c (-want +got):\n%s", diff)
	}
}

// TestDiffInjectSameScope: a credential whose scope lists the same hosts
// in both policies (in another order, in other cases) sends its value to
// the same hosts, whatever else changed; one that follows allowedDomains
// follows its changes, host by host.
func TestDiffInjectSameScope(t *testing.T) {
	policy := func(allowed, inject string) *query.Source {
		return load(t, `{"network": {"allowedDomains": `+allowed+`, "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"credentials": {"envVars": [{"name": "TOKEN", "mode": "mask"`+inject+`}]}}`)
	}
	for _, tc := range []struct {
		name     string
		old, new *query.Source
		want     []string
	}{
		{"same injectHosts, allowed grew", policy(`["a.example", "*.b.example"]`, `, "injectHosts": ["a.example", "*.b.example"]`),
			policy(`["a.example", "*.b.example", "c.example"]`, `, "injectHosts": ["*.B.example", "a.example"]`), []string{"linux wider connect c.example:22 by network.allowedDomains[2]", "linux wider connect c.example:443 by network.allowedDomains[2]"}},
		{"allowed grew", policy(`["a.example"]`, ``), policy(`["a.example", "c.example"]`, ``),
			[]string{"linux wider connect c.example:22 by network.allowedDomains[1]", "linux wider connect c.example:443 by network.allowedDomains[1]",
				"linux wider inject TOKEN -> c.example by credentials.envVars[0]"}},
		{"allowed in other cases and order", policy(`["a.example", "*.b.example"]`, ``), policy(`["*.B.example", "A.example"]`, ``), nil},
		{"injectHosts narrowed", policy(`["a.example", "c.example"]`, ``), policy(`["a.example", "c.example"]`, `, "injectHosts": ["a.example"]`),
			[]string{"linux stricter inject TOKEN -> c.example by credentials.envVars[0]"}},
	} {
		got := Diff(tc.old, tc.new, []query.Target{query.Linux})
		if diff := cmp.Diff(tc.want, summary(got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
		askEveryHost = true
		every := Diff(tc.old, tc.new, []query.Target{query.Linux})
		askEveryHost = false
		if diff := cmp.Diff(summary(every), summary(got)); diff != "" {
			t.Errorf("%s: asking every host (-) and the shortcut (+) disagree:\n%s", tc.name, diff)
		}
	}
}

// TestDiffInjectManyHosts: a credential whose real value goes to more
// than query.SomeMax hosts more gets one change for them, which counts
// the hosts asking every host finds; up to SomeMax, a change per host.
func TestDiffInjectManyHosts(t *testing.T) {
	policy := func(n int) *query.Source {
		var hosts []string
		for i := range n {
			hosts = append(hosts, fmt.Sprintf("%q", fmt.Sprintf("h%02d.example", i)))
		}
		return load(t, `{"network": {"allowedDomains": [`+strings.Join(hosts, ", ")+`], "deniedDomains": [], "tlsTerminate": {}},
		"filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []},
		"credentials": {"envVars": [{"name": "TOKEN", "mode": "mask"}, {"name": "OTHER", "mode": "mask", "injectHosts": ["h00.example"]}]}}`)
	}
	injects := func(cs []Change) []string {
		var out []string
		for _, c := range cs {
			if c.Kind == "inject" {
				out = append(out, fmt.Sprintf("%v %s", c.Wider, c.Subject))
			}
		}
		return out
	}
	for _, tc := range []struct {
		from, to int
		want     []string
		every    int
	}{
		{1, 11, []string{"true TOKEN -> h01.example", "true TOKEN -> h02.example", "true TOKEN -> h03.example", "true TOKEN -> h04.example", "true TOKEN -> h05.example",
			"true TOKEN -> h06.example", "true TOKEN -> h07.example", "true TOKEN -> h08.example", "true TOKEN -> h09.example", "true TOKEN -> h10.example"}, 10},
		{1, 13, []string{"true TOKEN -> 12 hosts"}, 12},
		{13, 1, []string{"false TOKEN -> 12 hosts"}, 12},
	} {
		old, new := policy(tc.from), policy(tc.to)
		got := Diff(old, new, []query.Target{query.Linux})
		if diff := cmp.Diff(tc.want, injects(got)); diff != "" {
			t.Errorf("%d -> %d hosts (-want +got):\n%s", tc.from, tc.to, diff)
		}
		for _, c := range got {
			if c.Kind == "inject" && tc.every > query.SomeMax && !strings.Contains(c.New.Why, "h01.example, h02.example") {
				t.Errorf("%d -> %d hosts: %q does not name the first hosts", tc.from, tc.to, c.New.Why)
			}
		}
		askEveryHost = true
		every := injects(Diff(old, new, []query.Target{query.Linux}))
		askEveryHost = false
		if len(every) != tc.every {
			t.Errorf("%d -> %d hosts: asking every host finds %d changes, want %d: %v", tc.from, tc.to, len(every), tc.every, every)
		}
	}
}
