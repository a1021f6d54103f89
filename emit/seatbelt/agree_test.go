package seatbelt_test

import (
	"encoding/json"
	"fmt"
	fnv32 "hash/fnv"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/emit/seatbelt"
	"srt.dev/review/query"
	"srt.dev/schema"
)

// The agreement test: review/query's macOS answers (written from the
// spec) against the emitted profile read back into a program
// (program_test.go) and evaluated with Decide, for every golden profile
// and generated policies, over
// the paths each policy names and probes around them.
//
// The comparison is:
//
//   - read: query Read against file-read-data on the path;
//   - write: query Write against file-write-data (changing the file);
//   - remove: query Remove against file-write-unlink (removing or
//     renaming the path: the profile keeps denied paths and their
//     directories from being moved away, docs/reference.md#macos-reads step 7,
//     docs/reference.md#macos-unlink-rule);
//     where Write allows and Remove refuses, it is also counted as "write
//     allowed, move refused";
//   - unix sockets: query UnixSocket against network-outbound to the
//     socket.
//
// Exceptions, counted and not compared: a policy or host srt refuses to
// run on macOS (seatbelt.Host.Check: a working directory or HOME of "/";
// ClimbingHazard: a path above ${HOME} or ${CWD}, which the
// profile cannot name; CrossRootHazard: a literal read deny inside
// an allow written from another root, which the profile cannot order on
// this host). Their profiles are never enforced; the evaluator answers
// them anyway, as the policy reads.
//
// What this proves: the two independent readings of the spec agree. What
// it cannot prove: that Seatbelt itself agrees with either (no Mac here).

// hosts are the host facts the answers are asked with: the working
// directory inside HOME, outside it, equal to it, and under /private/tmp
// (as the runtime passes it: symlinks resolved, docs/reference.md#macos-pitfalls), and named
// with metacharacters. A working directory of "/" is refused by srt
// (seatbelt.Host.Check; see TestRootHostRefused).
var hosts = []seatbelt.Host{
	{Home: "/Users/me", Cwd: "/Users/me/proj", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/me", Cwd: "/work/proj", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/me", Cwd: "/Users/me", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/me", Cwd: "/private/tmp/build", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
	{Home: "/Users/j.doe", Cwd: "/Users/j.doe/[WIP] a+b (1)", HTTPPort: 40001, SOCKSPort: 40002, LogTag: "T"},
}

// worlds say, for each of hosts, which paths exist when srt starts (the
// paths a profile asks about, seatbelt.Probes): all, none, or about half
// of them, picked by two independent bits of a hash of the path so that
// the evaluator and the profile must ask about the same path.
var worlds = []func(string) bool{
	func(string) bool { return true },
	func(string) bool { return false },
	func(p string) bool { return fnv(p)&1 == 0 },
	func(p string) bool { return fnv(p)&(1<<9) != 0 },
	func(string) bool { return true },
}

func fnv(s string) uint32 {
	h := fnv32.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}

// tally counts what the agreement compared.
type tally struct {
	policies, skipped        int
	answers, agree           int
	moveRefused, exceptional int
	refusedAnswers           int
	notExpressed             int
	refusals                 []string
	disagreements            []string
}

// mandatoryProbes are names below the working directory the mandatory
// write denies are about, at the top and deeper.
var mandatoryProbes = []string{
	".bashrc", "sub/.bashrc", "a/b/c/d/.zshrc", ".zshrc/x", ".mcp.json", "sub/.mcp.json", ".gitconfig",
	".git", ".git/HEAD", ".git/hooks", ".git/hooks/pre-commit", "sub/.git/hooks/pre-commit",
	".git/config", "sub/.git/config", ".vscode", ".vscode/settings.json",
	".git/commondir", "sub/.git/commondir", ".git/config.worktree", ".git/worktrees", ".git/worktrees/wt/commondir", "sub/.git/worktrees/x",
	"sub/.vscode", "sub/.vscode/settings.json", "sub/.git/hooks", "sub/.claude/commands", ".idea/x", ".claude", ".claude/settings.json", ".claude/commands/x",
	".claude/agents", "sub/.claude/commands/x", "node_modules/p/.bashrc", "src/main.go",
}

// fixedProbes are paths every policy is asked about.
func fixedProbes(h seatbelt.Host) []string {
	out := []string{"/", "/etc/passwd", "/tmp/x", "/tmp/claude/x", "/usr/bin/ls", "/dev/null", "/var/folders/x",
		h.Home, h.Home + "/.ssh/id_rsa", h.Home + "/.npm/_logs/x", h.Home + "/notes", h.Cwd, path.Dir(h.Cwd)}
	for _, m := range mandatoryProbes {
		out = append(out, h.Cwd+"/"+m)
	}
	// Git's files outside the repository, the directories above them,
	// and names beside them.
	for _, m := range []string{".gitconfig", ".gitk", ".config", ".config/git", ".config/git/config", ".config/git/gitk", ".config/git/ignore", ".config/other"} {
		out = append(out, h.Home+"/"+m)
	}
	return out
}

// concrete is a policy path on host h, a pattern replaced by a path it
// names, and "..", "." folded as the kernel does.
//
// The host's directory is text, not pattern: only what follows the root
// is sampled.
func concrete(p string, pattern bool, h seatbelt.Host) []string {
	dir := ""
	for _, r := range []struct{ sym, dir string }{{"${HOME}", h.Home}, {"${CWD}", h.Cwd}} {
		if p == r.sym || strings.HasPrefix(p, r.sym+"/") {
			dir, p = r.dir, p[len(r.sym):]
			break
		}
	}
	if !pattern {
		return []string{path.Clean(dir + p)}
	}
	// The spelling itself names a path too ("[WIP] x" is a real name).
	out := []string{path.Clean(dir + policy.GlobSample(p)), path.Clean(dir + p)}
	// "**/" also matches no directory at all.
	if q := strings.ReplaceAll(p, "/**/", "/"); q != p {
		out = append(out, path.Clean(dir+policy.GlobSample(q)))
	}
	return out
}

// probes are the paths asked about for p on h: each name, below, above
// and beside it, and the fixed ones.
func probes(p *policy.Policy, h seatbelt.Host) []string {
	fs := p.Filesystem
	lists := [][]policy.PathRule{fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks, p.Network.AllowUnixSockets}
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if !seen[s] && strings.HasPrefix(s, "/") {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, l := range lists {
		for _, r := range l {
			rp := r.Path.String()
			if r.Written != "" && r.Path.Root() == policy.Cwd {
				// The directories of the spelling before ".." was
				// folded ("./app/../conf": ${CWD}/app), which a
				// misreading would protect.
				dir := h.Cwd
				for _, s := range strings.Split(r.Written, "/") {
					if s != "" && s != "." && s != ".." {
						dir += "/" + s
						add(dir)
					}
				}
			}
			if strings.Contains(rp, "/../") {
				// The directories of a spelling with ".." before the
				// first "..", which the profile pins.
				dir := concrete(rp[:strings.Index(rp, "/../")], false, h)[0]
				add(dir)
				add(path.Dir(dir))
			}
			for _, c := range concrete(rp, r.Pattern && !r.Literal, h) {
				add(c)
				add(path.Join(c, "f")) // "/f", never "//f"
				add(path.Join(c, "a/b"))
				add(path.Dir(c))
				add(c + ".bak")
				add(path.Join(path.Dir(c), "other"))
			}
		}
	}
	for _, f := range fixedProbes(h) {
		add(f)
	}
	return out
}

// agree compares the answers for one policy and its profile.
func agree(t *testing.T, name string, p *policy.Policy, profile []byte, tl *tally) {
	t.Helper()
	tl.policies++
	climb := seatbelt.ClimbingHazard(p)
	for i, h := range hosts {
		h = onHost(h, p, worlds[i])
		in, err := seatbelt.NewInterp(profile, seatbelt.HostDefines(p, h))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ev := query.New(p, query.Options{Home: h.Home, Cwd: h.Cwd, Exists: worlds[i]})
		refused := h.Check()
		if refused == nil {
			refused = climb
		}
		if refused == nil {
			refused = seatbelt.CrossRootHazard(p, h.Home, h.Cwd)
		}
		if refused != nil {
			tl.skipped++
			tl.refusals = append(tl.refusals, fmt.Sprintf("%s (CWD=%s): %v", name, h.Cwd, refused))
		}
		agreeProcess(t, name, p, h, in, ev, refused != nil, tl)
		for _, pr := range probes(p, h) {
			q := ev.Path(pr)
			type answer struct {
				what  string
				query query.Decision
				op    string
			}
			as := []answer{
				{"read", ev.Read(q, query.MacOS), seatbelt.OpReadData},
				{"write", ev.Write(q, query.MacOS), seatbelt.OpWriteData},
				{"remove", ev.Remove(q, query.MacOS), seatbelt.OpUnlink},
				{"socket", ev.UnixSocket(q, query.MacOS), ""},
			}
			for _, a := range as {
				var got bool
				var line int
				if a.op == "" {
					got, line, err = in.Socket(pr)
				} else {
					got, line, err = in.File(a.op, pr)
				}
				if err != nil {
					t.Fatalf("%s: %s %s: %v", name, a.what, pr, err)
				}
				switch {
				case refused != nil:
					tl.refusedAnswers++
					if got != a.query.Allow {
						tl.exceptional++
					}
					continue
				case got != a.query.Allow:
					tl.answers++
					tl.disagreements = append(tl.disagreements, fmt.Sprintf("%s (HOME=%s CWD=%s): %s %s: query %s (%s: %s), profile %v (line %d)",
						name, h.Home, h.Cwd, a.what, pr, a.query.Verdict(), a.query.Rule.Key, a.query.Why, verdict(got), line))
					continue
				}
				tl.answers++
				tl.agree++
				if a.what == "write" && !got {
					// Denied means denied whole: a file that may not be
					// changed may not be removed or replaced either.
					c, _, _ := in.File(seatbelt.OpCreate, pr)
					u, _, _ := in.File(seatbelt.OpUnlink, pr)
					if c || u {
						tl.disagreements = append(tl.disagreements, fmt.Sprintf("%s (HOME=%s CWD=%s): write %s: query deny, profile denies changing it but allows create %v, unlink %v",
							name, h.Home, h.Cwd, pr, c, u))
					}
				}
				if a.what == "remove" && !got && ev.Write(q, query.MacOS).Allow {
					tl.moveRefused++
				}
			}
		}
	}
}

// agreeProcess compares the summary's macOS switches and the network
// lines with the profile: Apple Events, trustd, pseudo-terminals, local
// binding and the listed Mach services are operations of the profile;
// "connect anything else" is a direct connection (the proxies decide the
// rest, in compiler/policy/netpolicy, which the evaluator calls). Lines the
// profile cannot express (the environment, credential injection) are
// counted as such.
func agreeProcess(t *testing.T, name string, p *policy.Policy, h seatbelt.Host, in *seatbelt.Interp, ev *query.Evaluator, refused bool, tl *tally) {
	httpPort, socksPort := h.HTTPPort, h.SOCKSPort
	if p.Network.HTTPProxyPort != 0 {
		httpPort = p.Network.HTTPProxyPort
	}
	if p.Network.SOCKSProxyPort != 0 {
		socksPort = p.Network.SOCKSProxyPort
	}
	for _, l := range ev.Summary([]query.Target{query.MacOS}) {
		var got bool
		var line int
		var err error
		switch {
		case l.Kind == "connect" && l.Subject == "anything else":
			got, line, err = in.Outbound("93.184.216.34:443")
		case l.Kind == "connect" && refused:
			tl.refusedAnswers++
			continue
		case l.Kind == "connect":
			// Allowed or not, a connection goes to the proxies, which
			// must be reachable; they decide.
			ok1, _, err1 := in.Outbound(fmt.Sprintf("127.0.0.1:%d", httpPort))
			ok2, _, err2 := in.Outbound(fmt.Sprintf("127.0.0.1:%d", socksPort))
			if err1 != nil || err2 != nil || !ok1 || !ok2 {
				tl.disagreements = append(tl.disagreements, fmt.Sprintf("%s: connect %s: the proxies on %d/%d are not reachable in the profile (%v %v)", name, l.Subject, httpPort, socksPort, err1, err2))
			} else {
				tl.agree++
			}
			tl.answers++
			continue
		case l.Subject == "Apple Events":
			got, line, err = in.Op("appleevent-send")
		case l.Subject == "pseudo-terminals":
			got, line, err = in.Op("pseudo-tty")
		case l.Subject == "weaker network isolation":
			got, line, err = in.MachLookup("com.apple.trustd.agent")
		case l.Subject == "local binding (listen on localhost)":
			got, line, err = in.Bind("127.0.0.1:5555")
		case strings.HasPrefix(l.Subject, "mach-lookup "):
			svc := strings.TrimPrefix(l.Subject, "mach-lookup ")
			if prefix, ok := strings.CutSuffix(svc, "*"); ok {
				svc = prefix + "any"
			}
			got, line, err = in.MachLookup(svc)
		case l.Kind == "process":
			tl.notExpressed++
			continue
		default:
			continue // read, write and unix-socket lines: asked per path below
		}
		if err != nil {
			t.Fatalf("%s: %s: %v", name, l.Subject, err)
		}
		switch {
		case refused:
			tl.refusedAnswers++
			if got != l.Allow {
				tl.exceptional++
			}
		case got != l.Allow:
			tl.answers++
			tl.disagreements = append(tl.disagreements, fmt.Sprintf("%s: %s %s: query %s (%s), profile %v (line %d)", name, l.Kind, l.Subject, l.Verdict(), l.Why, verdict(got), line))
		default:
			tl.answers++
			tl.agree++
		}
	}
}

func verdict(b bool) string {
	if b {
		return "allow"
	}
	return "deny"
}

// report fails the test with the disagreements, a few of each kind.
func report(t *testing.T, tl *tally) {
	t.Helper()
	t.Logf("%d policies x %d hosts: %d answers compared, %d agree; %d policy/host pairs refused by srt on macOS, their %d answers not compared (%d would differ); %d writes allowed with the move (unlink/create) refused; %d summary lines the profile cannot express",
		tl.policies, len(hosts), tl.answers, tl.agree, tl.skipped, tl.refusedAnswers, tl.exceptional, tl.moveRefused, tl.notExpressed)
	if len(tl.refusals) > 0 && len(tl.refusals) <= 10 {
		t.Logf("refused by srt on macOS, not compared:\n%s", strings.Join(tl.refusals, "\n"))
	}
	if len(tl.disagreements) == 0 {
		return
	}
	sort.Strings(tl.disagreements)
	n := len(tl.disagreements)
	if n > 400 {
		tl.disagreements = tl.disagreements[:400]
	}
	t.Errorf("%d disagreements between review/query (macos) and the profile:\n%s", n, strings.Join(tl.disagreements, "\n"))
}

// TestAgreementGolden compares over every golden case with a profile.
func TestAgreementGolden(t *testing.T) {
	files, err := filepath.Glob("../../golden/testdata/*/macos/profile.sb")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d golden profiles, want at least 30", len(files))
	}
	tl := &tally{}
	for _, f := range files {
		dir := filepath.Dir(filepath.Dir(f))
		data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
		if err != nil {
			t.Fatal(err)
		}
		p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			t.Fatalf("%s: %v %v", dir, err, diags)
		}
		profile, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		agree(t, filepath.Base(dir), p, profile, tl)
	}
	report(t, tl)
}

// genPaths are the spellings generated policies are made of: home, the
// working directory, absolute, /tmp, patterns, sets, names with brackets,
// "..", and the root.
var genPaths = []string{
	"~/.ssh", "~", "~/proj", "~/proj/secret", ".", "./src", "./src/secret", "./src/*.pem", "**/.env", "**/*.key",
	"/etc", "/etc/hosts", "/tmp", "/tmp/cache", "~/.config/**", "./build[1]", "./[WIP] x/*.log", "/",
	"/Users", "/Users/me/proj/out", "./out/*", "/var/log", "./.git", "./.vscode", "~/.aws/credentials", "*.key",
	"/opt/a/../b", "./a/../c", "~/Library/**/Cookies", "/work", "/work/proj/dist", "/tmp/x/../y", "./src/[ab]*.go",
	"~/proj/**", "/private/tmp/z", "/var/run", "**/node_modules", "./*.pem", "/tmp/*/cache", "/Users/*/proj",
	"/etc/ssl/**/*.key", "./.claude", "~/.config/gh/hosts.yml", "./dist/[0-9]", "/**/*.key", "/*",
	// A deny written from another root than the allows it carves: an
	// absolute glob over the home directory (HOME is /Users/me on most
	// hosts) against ~ and . entries.
	"/Users/me/**/*", "/Users/me/Library/**", "~/Library/Caches", "~/work", "~/work/out",
	// ".." in relative entries, folded by the compiler; in absolute and ~
	// patterns, whose spelling as written is pinned too.
	"./app/../conf/secret", "./a/b/../../c", "src/../*.pem", "/opt/a/../*.key", "~/x/../y/*.pem",
	// A deny glob whose base directory is a write root.
	"/srv/cache", "/srv/cache/**/*.pem", "/srv/cache/*.pem",
	// A bracket set in an allow: no literal reading.
	"/data/runs/[0-9]*", "/data/runs",
}

// allowOnlyPaths are spellings generated only in allow lists: a rooted
// glob ending in a separator is refused in a deny list
// (docs/reference.md#cross-field-rules), and in an allow it names
// directories (matching nothing on macOS; never a file directly in the
// directory).
var allowOnlyPaths = []string{"/data/in/*/", "./out/*/", "~/proj/*/", "/Users/me/*/", "/srv/cache/**/", "/tmp/*/"}

// climbing are spellings above the working directory, which srt refuses
// on macOS; they are rarer, so that most generated policies are compared.
var climbing = []string{"../sibling", "./../up/*.txt"}

// genSettings is one generated settings file.
func genSettings(rng *rand.Rand) []byte {
	pick := func(max int, allow bool) []any {
		var out []any
		for i := rng.Intn(max + 1); i > 0; i-- {
			s := genPaths[rng.Intn(len(genPaths))]
			if rng.Intn(40) == 0 {
				s = climbing[rng.Intn(len(climbing))]
			}
			if allow && rng.Intn(6) == 0 {
				s = allowOnlyPaths[rng.Intn(len(allowOnlyPaths))]
			}
			if rng.Intn(8) == 0 {
				out = append(out, map[string]any{"path": s, "literal": true})
			} else {
				out = append(out, s)
			}
		}
		if out == nil {
			out = []any{}
		}
		return out
	}
	fs := map[string]any{"denyRead": pick(3, false), "allowRead": pick(2, true), "allowWrite": pick(3, true), "denyWrite": pick(2, false)}
	if rng.Intn(4) == 0 {
		fs["allowGitConfig"] = true
	}
	if rng.Intn(25) == 0 {
		fs["disabled"] = true
	}
	net := map[string]any{"allowedDomains": []string{"example.com"}, "deniedDomains": []string{}}
	switch rng.Intn(4) {
	case 0:
		net["allowAllUnixSockets"] = true
	case 1:
		net["allowUnixSockets"] = []string{"/var/run/docker.sock", "./dev.sock", "~/.ssh", "/tmp/s[1].sock"}
	}
	if rng.Intn(3) == 0 {
		net["allowLocalBinding"] = true
	}
	if rng.Intn(4) == 0 {
		net["allowMachLookup"] = []string{"com.example.svc", "org.example.*"}
	}
	if rng.Intn(6) == 0 {
		net["httpProxyPort"] = 3128
	}
	s := map[string]any{"network": net, "filesystem": fs}
	for _, k := range []string{"allowAppleEvents", "allowPty", "enableWeakerNetworkIsolation"} {
		if rng.Intn(4) == 0 {
			s[k] = true
		}
	}
	if rng.Intn(2) == 0 {
		var files []any
		for i := 1 + rng.Intn(2); i > 0; i-- {
			p := []string{"~/.netrc", "~/.aws/credentials", "./.env.local", "~/proj/token"}[rng.Intn(4)]
			if rng.Intn(2) == 0 {
				files = append(files, map[string]any{"path": p, "mode": "deny"})
			} else {
				files = append(files, map[string]any{"path": p, "mode": "mask", "extract": "token=(\\S+)"})
			}
		}
		s["credentials"] = map[string]any{"files": files, "allowPlaintextInject": true}
	}
	b, _ := json.Marshal(s)
	return b
}

// TestAgreementGenerated compares over generated policies.
func TestAgreementGenerated(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	tl := &tally{}
	invalid := 0
	n := 300
	if testing.Short() {
		n = 60 // about 3 s instead of 10 on one free core
	}
	for i := 0; i < n; i++ {
		data := genSettings(rng)
		p, diags, err := compiler.CompileFile("gen.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil {
			t.Fatal(err)
		}
		if diags != nil {
			invalid++
			if invalid == 1 {
				t.Logf("first invalid generated settings (not compared): %s\n%v", data, diags)
			}
			continue
		}
		profile, err := seatbelt.Emit(p)
		if err != nil {
			t.Fatalf("%s: Emit: %v", data, err)
		}
		agree(t, fmt.Sprintf("gen %d %s", i, data), p, profile, tl)
	}
	if tl.policies < n*5/6 {
		t.Fatalf("only %d of %d generated settings were valid, want at least %d", tl.policies, n, n*5/6)
	}
	report(t, tl)
}

// TestAgreementCanFail: a profile with one deny removed, or one write root
// turned into a deny, must disagree with the evaluator.
func TestAgreementCanFail(t *testing.T) {
	dir := "../../golden/testdata/typical-project"
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	profile, err := os.ReadFile(filepath.Join(dir, "macos", "profile.sb"))
	if err != nil {
		t.Fatal(err)
	}
	var noSSH []string
	for _, l := range strings.Split(string(profile), "\n") {
		if !strings.Contains(l, `"/.ssh"`) {
			noSSH = append(noSSH, l)
		}
	}
	mutants := map[string]string{
		"no ~/.ssh deny":     strings.Join(noSSH, "\n"),
		"write roots denied": strings.Replace(string(profile), "(allow file-write*\n", "(deny file-write*\n", 1),
		"no proxy port":      strings.ReplaceAll(string(profile), `(param "HTTP_PROXY_PORT")`, `"1"`),
		"unmatched /private": strings.ReplaceAll(string(profile), `"/private/tmp/claude"`, `"/tmp/claude"`),
	}
	for name, m := range mutants {
		if m == string(profile) {
			t.Fatalf("%s: the mutation changed nothing", name)
		}
		tl := &tally{}
		agree(t, name, p, []byte(m), tl)
		if len(tl.disagreements) == 0 {
			t.Errorf("%s: the agreement test found no disagreement", name)
		} else {
			t.Logf("%s: %d disagreements, e.g. %s", name, len(tl.disagreements), tl.disagreements[0])
		}
	}
}

// TestRootHostRefused: with the working directory "/", every rule under
// ${CWD} would be "//name" and match nothing, so the profile would not
// protect what the evaluator says it does; srt refuses such a host.
func TestRootHostRefused(t *testing.T) {
	dir := "../../golden/testdata/typical-project"
	data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
	if err != nil || diags != nil {
		t.Fatal(err, diags)
	}
	profile, err := seatbelt.Emit(p)
	if err != nil {
		t.Fatal(err)
	}
	h := seatbelt.Host{Home: "/Users/me", Cwd: "/", HTTPPort: 1, SOCKSPort: 2, LogTag: "T"}
	if err := h.Check(); err == nil {
		t.Fatal("Host.Check accepted CWD /")
	}
	in, err := seatbelt.NewInterp(profile, seatbelt.HostDefines(p, h))
	if err != nil {
		t.Fatal(err)
	}
	ev := query.New(p, query.Options{Home: h.Home, Cwd: h.Cwd})
	d := ev.Write(ev.Path("/.bashrc"), query.MacOS)
	got, _, err := in.File(seatbelt.OpWriteData, "/.bashrc")
	if err != nil || d.Allow || !got {
		t.Errorf("CWD /: write /.bashrc: query %v, profile %v (%v); want the disagreement that makes srt refuse the host", d.Verdict(), verdict(got), err)
	}
}

// TestAgreementCanFailShapes: each shape where the profile once differed
// from the reference's (allowing what it denies, or, where srt is stricter
// on purpose, allowing what the evaluator denies), put back into its
// golden profile as the emitter used to write it, must disagree with the
// evaluator.
func TestAgreementCanFailShapes(t *testing.T) {
	mutants := []struct {
		dir, name, old, new string // old "": new is appended
		all                 bool   // replace every occurrence, not the first
	}{
		{"macos-allow-glob-trailing-separator", "a trailing separator dropped",
			`(regex "^/data/in/[^/]*/$")`, `(regex "^/data/in/[^/]*$")`, false},
		{"macos-allow-glob-no-literal-reading", "the literal reading of an allow glob",
			`  (regex "^/data/runs/[0-9][^/]*$")` + "\n", `  (regex "^/data/runs/[0-9][^/]*$")` + "\n" + `  (subpath "/data/runs/[0-9]*")` + "\n", false},
		{"macos-cross-root-carve", "a deny re-emitted uncarved for an allow from another root",
			` (require-not (subpath (string-append (param "CARVE_3") (param "HOME") "/work")))`, ``, false},
		{"relative-dotdot-folded", "the unfolded spelling's directory pinned",
			"cannot be unlinked\n(deny file-write-unlink\n", "cannot be unlinked\n(deny file-write-unlink\n" + `  (literal (string-append (param "CWD") "/app"))` + "\n", false},
		{"macos-deny-glob-base-is-write-root", "the write root left unpinned",
			"  (regex \"^/srv/cache/(.*/)?[^/]*\\\\.pem(/.*)?$\")\n  (literal \"/srv/cache\")\n  (with message (param \"LOG_TAG\")))\n", "  (regex \"^/srv/cache/(.*/)?[^/]*\\\\.pem(/.*)?$\")\n  (with message (param \"LOG_TAG\")))\n", false},
		// Shapes found by the full generated agreement test.
		{"macos-convenience-roots-cross-root-deny", "a convenience write root kept under a deny from another root",
			`(param "CARVE_1") (param "HOME") "/.npm/_logs"`, `(param "HOME") "/.npm/_logs"`, true},
		{"macos-convenience-roots-pattern-allow", "a convenience write root reopened by a pattern allow",
			`(param "CARVE_2") (param "HOME") "/.claude/debug"`, `(param "HOME") "/.claude/debug"`, true},
		{"macos-absolute-deny-in-convenience-root", "an absolute deny left out of the unlink rule for the convenience roots",
			"(deny file-write-unlink\n" + `  (regex "^/Users/(.*/)?[^/]*\\.key(/.*)?$")` + "\n", "(deny file-write-unlink\n", false},
		{"macos-literal-deny-in-glob-write-root", "a literal deny left out of the unlink rule for a pattern root from another root",
			"(deny file-write-unlink\n" + `  (subpath (string-append (param "HOME") "/.config"))` + "\n", "(deny file-write-unlink\n", false},
		{"macos-text-reading-cross-root-allow", "the text reading of a deny glob not repeated after an allow from another root",
			`  (subpath (string-append (param "CARVE_4") (param "CWD") "/src/[ab]*.go"))` + "\n", "", false},
		{"macos-glob-write-root-pins", "a directory a pattern write root names left unpinned",
			`  (literal (string-append (param "CWD") "/[WIP] x"))` + "\n", "", true},
		{"macos-separator-root-holds-nothing", "a write root ending in a separator taken for a root from another root",
			"", "(deny file-write-unlink\n" + `  (subpath (string-append (param "CWD") "/conf/secret"))` + "\n" + `  (with message (param "LOG_TAG")))` + "\n", false},
		{"macos-deny-root-pattern-write-root", "a read deny of / taken for one a pattern root from another root names",
			"", "(deny file-write-unlink\n" + `  (subpath "/")` + "\n" + `  (with message (param "LOG_TAG")))` + "\n", false},
		{"macos-private-spelling-needs-host", "the /private spelling of a read allow granted whether or not its directory exists",
			`(string-append (param "PRIVATE_2") "/private/etc/ssl/certs")`, `"/private/etc/ssl/certs"`, true},
		{"macos-private-spelling-needs-host", "the /private spelling of a write root under /etc",
			`  (subpath "/etc/app")` + "\n", `  (subpath "/etc/app")` + "\n" + `  (subpath "/private/etc/app")` + "\n", true},
		{"macos-private-spelling-needs-host", "the /private spelling of a read allow of /etc itself",
			`  (subpath "/etc")` + "\n  (with", `  (subpath "/etc")` + "\n" + `  (subpath "/private/etc")` + "\n  (with", false},
		{"macos-m33-worked-example", "the /private spelling of a write root granted whether or not it exists",
			`(string-append (param "PRIVATE_2") "/private/tmp/build")`, `"/private/tmp/build"`, true},
		{"macos-m33-worked-example", "the /private spelling of a socket path granted whether or not it exists",
			`(string-append (param "PRIVATE_1") "/private/var/run/docker.sock")`, `"/private/var/run/docker.sock"`, true},
		{"globs-in-each-list", "the /private spelling of a pattern write root at /tmp itself",
			`  (regex "^/tmp/[^/]*/cache$")` + "\n", `  (regex "^/tmp/[^/]*/cache$")` + "\n" + `  (regex "^/private/tmp/[^/]*/cache$")` + "\n", true},
		{"macos-unlink-cross-root-write-root", "a read deny at a write root left out where a root from another root may hold it",
			`  (require-all (subpath "/data/runs") (require-not (subpath (string-append (param "CARVE_3") (param "CWD") "/out"))))` + "\n", "", false},
	}
	for _, mu := range mutants {
		dir := filepath.Join("../../golden/testdata", mu.dir)
		data, err := os.ReadFile(filepath.Join(dir, "settings.json"))
		if err != nil {
			t.Fatal(err)
		}
		p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			t.Fatal(err, diags)
		}
		profile, err := os.ReadFile(filepath.Join(dir, "macos", "profile.sb"))
		if err != nil {
			t.Fatal(err)
		}
		tl := &tally{}
		agree(t, mu.dir, p, profile, tl)
		if len(tl.disagreements) > 0 {
			t.Errorf("%s: the golden profile disagrees: %s", mu.dir, tl.disagreements[0])
		}
		n := 1
		if mu.all {
			n = -1
		}
		m := strings.Replace(string(profile), mu.old, mu.new, n)
		if mu.old == "" {
			m = string(profile) + mu.new // appended: a last rule
		}
		if m == string(profile) {
			t.Fatalf("%s: the mutation changed nothing", mu.name)
		}
		tl = &tally{}
		agree(t, mu.name, p, []byte(m), tl)
		if len(tl.disagreements) == 0 {
			t.Errorf("%s: the agreement test found no disagreement", mu.name)
		} else {
			t.Logf("%s: %d disagreements, e.g. %s", mu.name, len(tl.disagreements), tl.disagreements[0])
		}
	}
}
