package seatbelt_test

import (
	"slices"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/review/query"
	"srt.dev/schema"
)

// hosts are host facts to ask with: the working directory inside HOME,
// outside it, equal to it, under /private/tmp (as the runtime passes it:
// symlinks resolved, docs/reference.md#macos-pitfalls), and named with
// metacharacters.
var hosts = []seatbelt.Host{
	{Home: "/Users/me", Cwd: "/Users/me/proj", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/me", Cwd: "/work/proj", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/me", Cwd: "/Users/me", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/me", Cwd: "/private/tmp/build", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/j.doe", Cwd: "/Users/j.doe/[WIP] a+b (1)", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
}

func verdict(b bool) string {
	if b {
		return "allow"
	}
	return "deny"
}

// onHost is h with the existence facts of world for p's profile, as the
// runtime gathers them.
func onHost(h seatbelt.Host, p *policy.Policy, world func(string) bool) seatbelt.Host {
	h.Exists = map[string]bool{}
	for _, q := range seatbelt.Probes(p) {
		c, ok := h.Concrete(q)
		h.Exists[q] = ok && world(c)
	}
	return h
}

// TestPrivateSpellingNeedsTheHost: an allow under /tmp, /var or /etc is
// seen by Seatbelt only as /private/...; the reference grants that
// spelling only where it resolved the path when it started, so srt's
// profile may grant it only where the path exists then. The expected
// answers are written by hand, for a host where the named paths exist and
// one where nothing does; the evaluator and the interpreted profile must
// both give them.
func TestPrivateSpellingNeedsTheHost(t *testing.T) {
	everything := func(string) bool { return true }
	nothing := func(string) bool { return false }
	type ask struct {
		op, path        string
		present, absent bool // the answer with the named paths there, and without
	}
	for _, tt := range []struct {
		name, fs string
		asks     []ask
	}{
		{"write root under /tmp", `"allowWrite": ["/tmp/build"], "denyWrite": ["/tmp/build/secret"], "denyRead": ["/tmp/build/key"]`, []ask{
			{"write", "/private/tmp/build/x", true, false},
			{"write", "/tmp/build/x", true, false},
			{"write", "/private/tmp/build", true, false},
			{"write", "/private/tmp/build/secret/f", false, false},
			{"read", "/private/tmp/build/key", false, false},
			{"remove", "/private/tmp/build/key", false, false},
			{"write", "/private/tmp/claude/x", true, true}, // the default, listed as /private/tmp/claude too
		}},
		{"the top directories themselves and /etc", `"allowWrite": ["/tmp", "/etc/app", "/var/folders/x"], "denyRead": [], "denyWrite": []`, []ask{
			{"write", "/private/tmp/f", false, false},
			{"write", "/private/etc/app/f", false, false},
			{"write", "/private/var/folders/x/f", true, false},
		}},
		{"write root pattern", `"allowWrite": ["/tmp/out/*.log", "/tmp/*.txt"], "denyRead": [], "denyWrite": []`, []ask{
			{"write", "/private/tmp/out/a.log", true, false},
			{"write", "/private/tmp/a.txt", false, false}, // based at /tmp itself: the reference keeps "/tmp"
		}},
		{"read allow inside a deny", `"denyRead": ["/tmp", "/etc"], "allowRead": ["/tmp/a/b", "/etc/ssl/*.pem", "/etc"], "allowWrite": [], "denyWrite": []`, []ask{
			{"read", "/private/tmp/a/b/f", true, false},
			{"read", "/private/tmp/c", false, false},
			{"read", "/private/etc/ssl/x.pem", true, false},
			{"read", "/private/etc/passwd", false, false}, // "/etc" itself: the reference resolves only its directory, "/"
		}},
		// ".." is folded by the reference's realpath only: for a path
		// that exists when it starts.
		{"absolute and ~ allows with ..", `"allowWrite": ["/opt/a/../b", "~/x/../y"], "denyRead": ["/srv"], "allowRead": ["/srv/a/../c", "/srv/d/../*.pem"], "denyWrite": []`, []ask{
			{"write", "/opt/b/f", true, false},
			{"write", "/Users/me/y/f", true, false},
			{"read", "/srv/c/f", true, false},
			{"read", "/srv/k.pem", true, false},
			{"read", "/srv/e", false, false},
		}},
	} {
		data := `{"network": {"allowedDomains": [], "deniedDomains": [], "allowUnixSockets": ["/var/run/docker.sock", "~/run/../agent.sock"]}, "filesystem": {` + tt.fs + `}}`
		p, diags, err := compiler.CompileFile("settings.json", []byte(data), schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			t.Fatalf("%s: %v %v", tt.name, err, diags)
		}
		profile, err := seatbelt.Emit(p)
		if err != nil {
			t.Fatal(err)
		}
		asks := append(tt.asks, ask{"socket", "/private/var/run/docker.sock", true, false}, ask{"socket", "/Users/me/agent.sock", true, false})
		for _, world := range []struct {
			name   string
			exists func(string) bool
		}{{"present", everything}, {"absent", nothing}} {
			h := onHost(hosts[0], p, world.exists)
			in, err := seatbelt.NewInterp(profile, seatbelt.HostDefines(p, h))
			if err != nil {
				t.Fatal(err)
			}
			ev := query.New(p, query.Options{Home: h.Home, Cwd: h.Cwd, Exists: world.exists})
			for _, a := range asks {
				want := a.present
				if world.name == "absent" {
					want = a.absent
				}
				q := ev.Path(a.path)
				var d query.Decision
				var got bool
				switch a.op {
				case "read":
					d = ev.Read(q, query.MacOS)
					got, _, err = in.File(seatbelt.OpReadData, a.path)
				case "write":
					d = ev.Write(q, query.MacOS)
					got, _, err = in.File(seatbelt.OpWriteData, a.path)
				case "remove":
					d = ev.Remove(q, query.MacOS)
					got, _, err = in.File(seatbelt.OpUnlink, a.path)
				case "socket":
					d = ev.UnixSocket(q, query.MacOS)
					got, _, err = in.Socket(a.path)
				}
				if err != nil {
					t.Fatal(err)
				}
				if d.Allow != want {
					t.Errorf("%s, %s: query %s %s = %s (%s), want %s", tt.name, world.name, a.op, a.path, d.Verdict(), d.Why, verdict(want))
				}
				if got != want {
					t.Errorf("%s, %s: profile %s %s = %s, want %s", tt.name, world.name, a.op, a.path, verdict(got), verdict(want))
				}
			}
		}
	}
}

// TestPrivateSpellingExplained: asked without the host, the answer for
// such a path says what it depends on.
func TestPrivateSpellingExplained(t *testing.T) {
	data := `{"network": {"allowedDomains": [], "deniedDomains": [], "allowUnixSockets": ["/var/run/docker.sock"]}, "filesystem": {"allowWrite": ["/tmp/build", "/tmp"], "denyRead": ["/tmp"], "allowRead": ["/tmp/a/b"], "denyWrite": []}}`
	p, diags, err := compiler.CompileFile("settings.json", []byte(data), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	ev := query.New(p, query.Options{})
	for _, c := range []struct {
		d    query.Decision
		want string
	}{
		{ev.Write("/tmp/build/x", query.MacOS), "only if /tmp/build exists when srt starts"},
		{ev.Read("/tmp/a/b/x", query.MacOS), "only if /tmp/a exists when srt starts"},
		{ev.UnixSocket("/var/run/docker.sock", query.MacOS), "only if /var/run/docker.sock exists when srt starts"},
	} {
		if !c.d.Allow || !strings.Contains(c.d.Why, c.want) {
			t.Errorf("got %s (%s), want allow and %q", c.d.Verdict(), c.d.Why, c.want)
		}
	}
	// A deny names the allow that does not hold, and why.
	absent := query.New(p, query.Options{Exists: func(string) bool { return false }})
	for _, c := range []struct {
		d    query.Decision
		want string
	}{
		{absent.Write("/tmp/build/x", query.MacOS), "filesystem.allowWrite[0] names it, but only if /tmp/build exists when srt starts, and it does not here"},
		{absent.Read("/tmp/a/b/x", query.MacOS), "filesystem.allowRead[0] names it, but only if /tmp/a exists"},
		{absent.UnixSocket("/var/run/docker.sock", query.MacOS), "network.allowUnixSockets[0] names it, but only if /var/run/docker.sock exists"},
		{ev.Write("/tmp/x", query.MacOS), "filesystem.allowWrite[1] names it, but macOS sees it only as /private/tmp, a spelling the reference never adopts"},
	} {
		if c.d.Allow || !strings.Contains(c.d.Why, c.want) {
			t.Errorf("got %s (%s), want deny and %q", c.d.Verdict(), c.d.Why, c.want)
		}
	}
}

// TestPrivateSpellingWhichPath: which path's existence decides. A read
// allow's second spelling in the reference resolves only its directory; a
// write root is resolved whole. Worlds where only the directories exist,
// and (not a real file system, but it tells the two apart) only the
// paths themselves.
func TestPrivateSpellingWhichPath(t *testing.T) {
	data := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["/tmp", "/opt"], "allowRead": ["/tmp/a/b", "/opt/a/../c"], "allowWrite": ["/tmp/c/d", "/opt/e/../f"], "denyWrite": []}}`
	p, diags, err := compiler.CompileFile("settings.json", []byte(data), schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	profile, err := seatbelt.Emit(p)
	if err != nil {
		t.Fatal(err)
	}
	in := func(set ...string) func(string) bool {
		return func(q string) bool { return slices.Contains(set, q) }
	}
	for _, tt := range []struct {
		world    string
		exists   func(string) bool
		op, path string
		want     bool
	}{
		{"directories", in("/tmp/a", "/tmp/c", "/opt/a/.."), "read", "/private/tmp/a/b/x", true},
		{"directories", in("/tmp/a", "/tmp/c", "/opt/a/.."), "read", "/opt/c/x", true},
		{"directories", in("/tmp/a", "/tmp/c", "/opt/e"), "write", "/private/tmp/c/d/x", false},
		{"directories", in("/tmp/a", "/tmp/c", "/opt/e"), "write", "/opt/f/x", false},
		{"paths", in("/tmp/a/b", "/tmp/c/d", "/opt/a/../c"), "read", "/private/tmp/a/b/x", false},
		{"paths", in("/tmp/a/b", "/tmp/c/d", "/opt/a/../c"), "read", "/opt/c/x", false},
		{"paths", in("/tmp/a/b", "/tmp/c/d", "/opt/e/../f"), "write", "/private/tmp/c/d/x", true},
		{"paths", in("/tmp/a/b", "/tmp/c/d", "/opt/e/../f"), "write", "/opt/f/x", true},
	} {
		h := onHost(hosts[0], p, tt.exists)
		ip, err := seatbelt.NewInterp(profile, seatbelt.HostDefines(p, h))
		if err != nil {
			t.Fatal(err)
		}
		ev := query.New(p, query.Options{Home: h.Home, Cwd: h.Cwd, Exists: tt.exists})
		d := ev.Read(ev.Path(tt.path), query.MacOS)
		op := seatbelt.OpReadData
		if tt.op == "write" {
			d, op = ev.Write(ev.Path(tt.path), query.MacOS), seatbelt.OpWriteData
		}
		got, _, err := ip.File(op, tt.path)
		if err != nil {
			t.Fatal(err)
		}
		if d.Allow != tt.want || got != tt.want {
			t.Errorf("%s exist: %s %s: query %s (%s), profile %s; want %s", tt.world, tt.op, tt.path, d.Verdict(), d.Why, verdict(got), verdict(tt.want))
		}
	}
}
