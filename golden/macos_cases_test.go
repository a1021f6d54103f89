package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The spec's macOS golden cases (docs/reference.md#macos-cases), checked against
// the golden profiles. The spec writes host paths (CWD=/w/proj,
// HOME=/Users/u); srt's profiles write them as parameters, so the strings
// below are the spec's rules in that form. Where srt deliberately differs,
// the case says so (and the README lists it).

const tagged = `  (with message (param "LOG_TAG")))`

// rule is the exact text of a computed rule with these filters.
func rule(head string, filters ...string) string {
	var b strings.Builder
	b.WriteString("(" + head + "\n")
	for _, f := range filters {
		b.WriteString("  " + f + "\n")
	}
	return b.String() + tagged + "\n"
}

func cwd(rest string) string  { return `(string-append (param "CWD") "` + rest + `")` }
func home(rest string) string { return `(string-append (param "HOME") "` + rest + `")` }
func cwdRe(rest string) string {
	return `(regex (string-append "^" (param "CWD_REGEX") "` + rest + `"))`
}

// mand is the spec's MAND filter set in srt's order of the names.
func mand(gitConfig bool) []string {
	var out []string
	for _, f := range []string{".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".gitmodules", ".ripgreprc", ".mcp.json"} {
		out = append(out, "(subpath "+cwd("/"+f)+")", cwdRe(`/(.*/)?`+strings.ReplaceAll(`\`+f, ".", `\\.`)[1:]+`(/.*)?$`))
	}
	for _, d := range []string{".vscode", ".idea", ".claude/commands", ".claude/agents"} {
		out = append(out, "(subpath "+cwd("/"+d)+")", cwdRe(`/(.*/)?`+strings.ReplaceAll(d, ".", `\\.`)+`/.*(/.*)?$`))
	}
	// The git names, in each repository and each submodule's git directory.
	git := func(name, tail string) {
		re := strings.ReplaceAll(name, ".", `\\.`)
		out = append(out, "(subpath "+cwd("/.git/"+name)+")", cwdRe(`/(.*/)?\\.git/`+re+tail), cwdRe(`/(.*/)?\\.git/modules/(.*/)?`+re+tail))
	}
	git("hooks", `/.*(/.*)?$`)
	git("worktrees", `/.*(/.*)?$`)
	git("commondir", `(/.*)?$`)
	if gitConfig {
		git("config", `(/.*)?$`)
		git("config.worktree", `(/.*)?$`)
	}
	return out
}

var proxyTriple = func(port string) []string {
	return []string{
		`(allow network-bind (local ip ` + port + `))`,
		`(allow network-inbound (local ip ` + port + `))`,
		`(allow network-outbound (remote ip ` + port + `))`,
	}
}

// keptRoots are defaultRoots where a read deny from another root than
// ${HOME} may hide the convenience roots: each is kept only where the
// runtime's carve parameter says no deny hides it on the host.
var keptRoots = append(append([]string{}, defaultRoots[:8]...),
	`(subpath (string-append (param "CARVE_1") (param "HOME") "/.npm/_logs"))`,
	`(subpath (string-append (param "CARVE_2") (param "HOME") "/.claude/debug"))`)

var defaultRoots = []string{`(subpath "/dev/stdout")`, `(subpath "/dev/stderr")`, `(subpath "/dev/null")`, `(subpath "/dev/tty")`,
	`(subpath "/dev/dtracehelper")`, `(subpath "/dev/autofs_nowait")`, `(subpath "/tmp/claude")`, `(subpath "/private/tmp/claude")`,
	"(subpath " + home("/.npm/_logs") + ")", "(subpath " + home("/.claude/debug") + ")"}

type macCase struct {
	dir     string
	ordered []string // must appear, in this order
	once    []string // must appear exactly once
	not     []string // must not appear
	count   map[string]int
	check   func(profile string) error
}

func macCases() map[string]macCase {
	httpP := `(string-append "localhost:" (param "HTTP_PROXY_PORT"))`
	return map[string]macCase{
		"M2": {dir: "macos-m02-filesystem-disabled-env-only", ordered: []string{`(deny default (with message (param "LOG_TAG")))`, "\n(allow file-read*)\n(allow file-write*)\n"},
			not: []string{".bashrc"}},
		"M3": {dir: "empty-lists", ordered: []string{"(version 1)\n", `(allow sysctl-write (sysctl-name "kern.tcsm_enable"))`, `(allow mach-lookup (global-name "com.apple.SecurityServer"))`},
			not: []string{"(allow network*)", `"*:*"`, "trustd", "appleevent-send", "lsopen", "pseudo-tty", "unix-socket", "AF_UNIX"},
			check: func(p string) error {
				if !strings.HasPrefix(p, "(version 1)\n") {
					return fmt.Errorf("(version 1) is not the first line")
				}
				return nil
			}},
		"M4": {dir: "macos-m04-one-external-proxy-port", once: proxyTriple(`"localhost:60001"`), not: []string{`(param "HTTP_PROXY_PORT")`, `(param "SOCKS_PROXY_PORT")`}},
		"M5": {dir: "external-proxies", ordered: append(proxyTriple(`"localhost:3128"`), proxyTriple(`"localhost:1080"`)...)},
		"M6": {dir: "macos-m06-allow-local-binding", ordered: []string{`(allow network-bind (local ip "*:*"))`, `(allow network-inbound (local ip "*:*"))`, `(allow network-outbound (remote ip "localhost:*"))`},
			not: []string{`(remote ip "*:*")`}},
		"M8": {dir: "unix-sockets-paths", once: []string{"(allow system-socket (socket-domain AF_UNIX))"},
			ordered: []string{`(allow network-bind (local unix-socket (subpath "/var/run/docker.sock")))`, `(allow network-outbound (remote unix-socket (subpath "/var/run/docker.sock")))`,
				`(allow network-bind (local unix-socket (subpath ` + home("/.ssh/agent.sock") + `)))`, `(allow network-outbound (remote unix-socket (subpath ` + home("/.ssh/agent.sock") + `)))`},
			not: []string{"~"}},
		"M9": {dir: "allow-all-unix-sockets", ordered: []string{`(allow network-bind (local unix-socket (path-regex #"^/")))`, `(allow network-outbound (remote unix-socket (path-regex #"^/")))`},
			not: []string{`(subpath "/var/run/docker.sock")`}},
		"M10": {dir: "macos-m10-mach-lookup", ordered: []string{`(allow mach-lookup (global-name-prefix "com.1password."))`, `(allow mach-lookup (global-name "com.apple.exact"))`, `(allow mach-lookup (global-name-prefix ""))`, "(allow ipc-posix-shm)"}},
		"M11": {dir: "macos-m11-weaker-network-isolation", ordered: []string{`(allow mach-lookup (global-name "com.apple.trustd.agent"))`, "(allow ipc-posix-shm)"}},
		"M12": {dir: "macos-m12-apple-events", ordered: []string{"(allow appleevent-send)", `(allow mach-lookup (global-name "com.apple.coreservices.appleevents"))`, "(allow lsopen)",
			`(allow mach-lookup (global-name "com.apple.CoreServices.coreservicesd"))`, `(allow mach-lookup (global-name "com.apple.coreservices.quarantine-resolver"))`}},
		"M13": {dir: "macos-m13-pty", ordered: []string{"(allow pseudo-tty)", `(literal "/dev/ptmx")`}, count: map[string]int{`(regex #"^/dev/ttys")`: 2},
			check: func(p string) error {
				if i, j := strings.Index(p, "(allow pseudo-tty)"), strings.LastIndex(p, "file-write"); i < 0 || j > i && !strings.Contains(p[i:], "(allow file-read* file-write* (literal \"/dev/ptmx\")") {
					return fmt.Errorf("the pty block is not after the last file-write rule")
				}
				return nil
			}},
		// Settings always have the default write roots, so M14's "no
		// (allow file-write*" does not apply.
		"M14": {dir: "empty-lists", ordered: []string{rule("deny file-write*", mand(true)...)},
			once: []string{"  (literal " + cwd("/.claude") + ")\n", "  (literal " + cwd("/.git") + ")\n", `  (literal (param "CWD"))` + "\n", `  (regex (param "CWD_PARENTS_REGEX"))` + "\n"},
			not:  []string{`(literal "/")`}},
		"M15": {dir: "allow-git-config-depth-1", ordered: []string{"(subpath " + cwd("/.git/hooks") + ")"}, not: []string{".git/config"}},
		"M16": {dir: "macos-m16-deny-read-literal", ordered: []string{rule("deny file-read*", `(subpath "/data/secret")`), "(allow file-read-metadata (vnode-type DIRECTORY))",
			rule("deny file-write-unlink file-write-create", `(subpath "/data/secret")`, `(literal "/data")`)}},
		"M17": {dir: "macos-m17-deny-root-allow-usr-bin", ordered: []string{rule("deny file-read*", `(subpath "/")`), rule("allow file-read*", `(subpath "/usr")`, `(subpath "/bin")`),
			`(allow file-read* (literal "/"))`, "(allow file-read-metadata", rule("deny file-write-unlink file-write-create", `(subpath "/")`)},
			not: []string{`  (literal "/")`}},
		// srt also pins the write root that holds the deny's base
		// directory (see docs/macos-divergences.md): renaming it into
		// another write root would carry the .env files out of reach.
		"M18": {dir: "macos-m18-glob-deny-in-write-root", count: map[string]int{`(regex "^/srv/proj/(.*/)?\\.env(/.*)?$")`: 4},
			ordered: []string{rule("deny file-write-unlink", `(regex "^/srv/proj/(.*/)?\\.env(/.*)?$")`, `(literal "/srv/proj")`)}, not: []string{"require-not"}},
		"M19": {dir: "macos-m19-region-glob-carve-outs", ordered: []string{
			`(regex "^/Users/me/other[^/]*$")`,
			rule("deny file-read*", `(require-all (regex "^/Users/me/(.*/)?[^/]*(/.*)?$") (require-not (subpath "/Users/me/proj")) (require-not (regex "^/Users/me/other[^/]*$")))`),
			rule("deny file-write-unlink", `(require-all (regex "^/Users/me/(.*/)?[^/]*(/.*)?$") (require-not (subpath "/Users/me/proj")) (require-not (regex "^/Users/me/other[^/]*$")) (require-not (subpath "/Users/me/.cache")))`)},
			not: []string{`^/Users/me/other[^/]*(/.*)?$`}},
		"M20": {dir: "macos-m20-late-literal-deny", ordered: []string{rule("allow file-read*", `(subpath "/p")`), rule("deny file-read*", `(subpath "/p/secrets")`)}},
		"M21": {dir: "macos-m21-move-block-pins", ordered: []string{
			rule("deny file-write-unlink file-write-create", `(subpath "/p/a/b/secret")`, `(literal "/p/a/b")`, `(literal "/p/a")`, `(literal "/p")`, `(regex "^/p/conf/[^/]*\\.pem(/.*)?$")`, `(literal "/p/conf")`),
			// srt also pins the write root /p (the spec's must-not; see
			// M18).
			rule("deny file-write-unlink", `(subpath "/p/a/b/secret")`, `(literal "/p/a/b")`, `(literal "/p/a")`, `(literal "/p")`, `(regex "^/p/conf/[^/]*\\.pem(/.*)?$")`, `(literal "/p/conf")`)}},
		"M22": {dir: "macos-m22-write-globs", ordered: []string{cwdRe(`/src/(.*/)?[^/]*\\.ts$`), `(regex "^/srv/out-[^/]*$")`, cwdRe(`/(.*/)?secrets(/.*)?$`), `(regex "^/srv/out-[^/]*/keep(/.*)?$")`},
			not: []string{`^/srv/out-[^/]*(/.*)?$`}},
		"M23": {dir: "macos-m23-grouped-write-denies", ordered: []string{`  (regex "^/w/pkgs/(a|b|c|d|e)/(\\.env)(/.*)?$")`, "(deny file-write-unlink file-write-create",
			`  (regex "^/w/pkgs/(a|b|c|d|e)/(\\.env)(/.*)?$")`, `  (regex "^/w/pkgs/(a|b|c|d|e)$")`, `  (literal "/w/pkgs")`, `  (literal "/w")`},
			not: []string{`(subpath "/w/pkgs/a/.env")`}},
		"M24": {dir: "macos-m24-too-few-to-group", ordered: []string{`(subpath "/w/pkgs/a/.env")`, `(subpath "/w/pkgs/c/.env")`, `(literal "/w/pkgs/a")`}, not: []string{"(a|b|c)"}},
		// A TAB (and every control character) is refused with an error
		// instead (emit/seatbelt TestControlCharactersRefused).
		"M25": {dir: "macos-m25-string-escaping", ordered: []string{`(subpath "/srv/we\"ird")`, `(subpath "/srv/back\\slash")`, `(subpath "/srv/é ü")`, `(subpath "/srv/(paren)+$")`, "(subpath \"/srv/line\u2028sep 🔑\x7f\")"},
			not: []string{`\u00e9`, `\u2028`}},
		"M26": {dir: "macos-m26-regex-metacharacters", ordered: []string{`(regex "^/w/\\(x\\)\\+\\{y\\}\\|z\\$\\^\\.txt[^/]*(/.*)?$")`, `(regex "^/w/\\[user-id\\]/[^/]*\\.env(/.*)?$")`, `(regex "^/w/file[0-9]\\.txt(/.*)?$")`}},
		// srt's compiler drops a trailing "/" (the IR has none), so the
		// allow matches the directories instead of nothing.
		// The spec's regex: it matches nothing (Seatbelt never checks a
		// path ending in "/"); without the "/" it would match every file
		// in /w/x.
		"M27": {dir: "macos-m27-allow-glob-trailing-slash", ordered: []string{`(regex "^/w/x/[^/]*/$")`}, not: []string{`(subpath "/w/x`, `(regex "^/w/x/[^/]*$")`}},
		"M28": {dir: "macos-m28-brackets-in-names", ordered: []string{rule("deny file-read*", `(regex "^/w/[WIP] proj/keep(/.*)?$")`, `(regex "^/w/[WIP] proj/(.*/)?\\.env(/.*)?$")`,
			`(subpath "/w/[WIP] proj/keep")`, `(regex "^/w/\\[WIP\\] proj/(.*/)?\\.env(/.*)?$")`), `(literal "/w/[WIP] proj")`}},
		// srt adds the /private spelling of /tmp/build, which is the path
		// Seatbelt sees, behind the parameter that the runtime sets where
		// /tmp/build exists when srt starts (the reference resolves it
		// then, and keeps "/tmp/build", which matches nothing, where it
		// does not); likewise /var/run/docker.sock.
		"M33": {dir: "macos-m33-worked-example", ordered: []string{
			rule("allow file-write*", append(append([]string{}, keptRoots...), `(subpath (param "CWD"))`, `(subpath "/tmp/build")`, `(subpath (string-append (param "PRIVATE_2") "/private/tmp/build"))`)...),
			"(deny file-write*\n  (subpath " + cwd("/secrets") + ")", "(allow pseudo-tty)"},
			once: append([]string{`(allow network-bind (local unix-socket (subpath "/var/run/docker.sock")))`}, proxyTriple(httpP)...),
			not:  []string{`/**"`, `secrets/"`}},
		// The trailing rule also pins ${HOME} and its parents: whether HOME
		// lies inside the write root ${CWD}/src is a host fact.
		"M34": {dir: "macos-m34-credential-deny", count: map[string]int{"  (subpath " + home("/.netrc") + ")\n": 4},
			ordered: []string{rule("deny file-read*", "(subpath "+home("/.netrc")+")"), rule("deny file-read*", "(subpath "+home("/.netrc")+")"),
				rule("deny file-write-unlink", "(subpath "+home("/.netrc")+")", `(literal (param "HOME"))`, `(regex (param "HOME_PARENTS_REGEX"))`)}},
		"M35":  {dir: "macos-m35-filesystem-disabled", ordered: append(proxyTriple(httpP), "\n(allow file-read*)\n(allow file-write*)\n"), not: []string{".bashrc"}},
		"M36a": {dir: "macos-m36a-deny-npm", ordered: []string{"(subpath " + home("/.claude/debug") + ")"}, not: []string{"_logs"}},
		"M36b": {dir: "macos-m36b-deny-npm-allow-logs", ordered: []string{"(allow file-write*\n", "(subpath " + home("/.npm/_logs") + ")", "(subpath " + home("/.claude/debug") + ")"}},
		// Whether /Users holds ${HOME} is a host fact: srt keeps the
		// convenience roots only where the runtime finds that /Users/**
		// does not hide them (a carve parameter).
		"M36c": {dir: "macos-m36c-deny-users", ordered: []string{`(subpath "/Users")`, "(allow file-write*\n", keptRoots[8], keptRoots[9]}},
		"M37":  {dir: "macos-m37-denywrite-glob-allowwrite-dir", ordered: []string{"(subpath " + cwd("/src") + ")", cwdRe(`/(.*/)?[^/]*\\.key(/.*)?$`)}, not: []string{`/src/.*`}},
		// Five shapes where srt's profile once allowed what the
		// reference's denies (docs/macos-divergences.md).
		"trailing separator": {dir: "macos-allow-glob-trailing-separator",
			ordered: []string{rule("allow file-read*", `(regex "^/data/in/[^/]*/$")`), `(regex "^/data/out/[^/]*/$")`},
			not:     []string{`(regex "^/data/in/[^/]*$")`, `(regex "^/data/out/[^/]*$")`}},
		"no literal reading in an allow": {dir: "macos-allow-glob-no-literal-reading",
			ordered: []string{`(regex "^/data/keep[1](/.*)?$")`, `(subpath "/data/keep[1]")`, `(regex "^/data/runs/[0-9][^/]*$")`},
			not:     []string{`(subpath "/data/runs/[0-9]*")`}},
		"carve across roots": {dir: "macos-cross-root-carve", ordered: []string{
			rule("deny file-read*", `(require-all (regex "^/Users/me/(.*/)?[^/]*(/.*)?$") (require-not (subpath (string-append (param "CARVE_3") (param "HOME") "/work"))) (require-not (subpath (string-append (param "CARVE_4") (param "HOME") "/Library/Caches"))))`),
			`(require-all (regex "^/Users/me/(.*/)?[^/]*(/.*)?$") (require-not (subpath (string-append (param "CARVE_3") (param "HOME") "/work"))) (require-not (subpath (string-append (param "CARVE_4") (param "HOME") "/Library/Caches"))) (require-not (subpath (string-append (param "CARVE_5") (param "HOME") "/work/out"))))`}},
		"relative .. folded": {dir: "relative-dotdot-folded",
			ordered: []string{"(subpath " + cwd("/conf/secret") + ")", "(literal " + cwd("/conf") + ")", "(subpath " + cwd("/locked") + ")"},
			not:     []string{"/app", "/a/"}},
		// Deliberately stricter than the reference: the root is pinned.
		"deny glob based at a write root": {dir: "macos-deny-glob-base-is-write-root",
			ordered: []string{rule("deny file-write-unlink", `(regex "^/srv/cache/(.*/)?[^/]*\\.pem(/.*)?$")`, `(literal "/srv/cache")`)}},
		// Shapes the full generated agreement test found.
		"convenience roots under a deny from another root": {dir: "macos-convenience-roots-cross-root-deny",
			count: map[string]int{keptRoots[8]: 2, keptRoots[9]: 2}, not: []string{"(subpath " + home("/.npm/_logs") + ")"}},
		// Only a literal allow reopens a convenience root; the runtime
		// decides it for each (~/.claude covers ~/.claude/debug on every
		// host, and the pattern ~/.claude/* does not reopen it).
		"convenience roots and a pattern allow": {dir: "macos-convenience-roots-pattern-allow",
			count: map[string]int{keptRoots[8]: 2, keptRoots[9]: 2}},
		// The /private spelling of an allow holds where the path (a read
		// allow's directory, a pattern's base) exists when srt starts;
		// /tmp and /var themselves and /etc are never write roots.
		"the /private spelling of an allow behind its parameter": {dir: "macos-private-spelling-needs-host",
			ordered: []string{`(subpath (string-append (param "PRIVATE_1") "/private/var/run/docker.sock"))`,
				`(subpath (string-append (param "PRIVATE_2") "/private/etc/ssl/certs"))`, `(regex (string-append "^" (param "PRIVATE_2") "/private/etc/ssl/[^/]*\\.pem$"))`,
				`(subpath (string-append (param "PRIVATE_3") "/private/tmp/build"))`, `(regex (string-append "^" (param "PRIVATE_4") "/private/tmp/out/[^/]*\\.log$"))`},
			not: []string{`(subpath "/private/tmp")`, `/private/etc/app"`, `(subpath "/private/var/run/docker.sock")`, `(subpath "/private/tmp/build")`}},
		// An absolute deny may match files inside ~/.npm/_logs.
		"an absolute deny in the convenience roots": {dir: "macos-absolute-deny-in-convenience-root",
			ordered: []string{rule("deny file-write-unlink", `(regex "^/Users/(.*/)?[^/]*\\.key(/.*)?$")`)}},
		"a literal deny a pattern write root from another root names": {dir: "macos-literal-deny-in-glob-write-root",
			ordered: []string{rule("deny file-write-unlink", "(subpath "+home("/.config")+")", `(literal (param "HOME"))`, `(regex (param "HOME_PARENTS_REGEX"))`)}},
		"the text reading of a deny glob inside an allow from another root": {dir: "macos-text-reading-cross-root-allow",
			ordered: []string{rule("allow file-read*", "(subpath "+home("/proj")+")"), "(deny file-read*\n",
				`  (subpath (string-append (param "CARVE_4") (param "CWD") "/src/[ab]*.go"))` + "\n" + tagged}},
		// Deliberately stricter than the reference: a directory a
		// pattern write root names is pinned.
		"pins inside a pattern write root": {dir: "macos-glob-write-root-pins",
			ordered: []string{"; Read-denied paths inside write roots cannot be unlinked\n", "(literal " + cwd("/[WIP] x") + ")\n" + tagged}},
		// Deliberately stricter than the reference: a write root from
		// another root may hold the deny; an absolute deny with ".."
		// pins the directories of both spellings.
		// A write root ending in a separator matches nothing: it holds
		// no read deny.
		"a separator root holds nothing": {dir: "macos-separator-root-holds-nothing",
			ordered: []string{`(regex "^/srv/cache/$")`}, not: []string{"cannot be unlinked"}},
		"a read deny of / is in no unlink rule": {dir: "macos-deny-root-pattern-write-root",
			ordered: []string{`(regex (string-append "^" (param "CWD_REGEX") "/out/[^/]*\\.log$"))`}, not: []string{"cannot be unlinked"}},
		"unlink rules for roots from another root": {dir: "macos-unlink-cross-root-write-root",
			ordered: []string{rule("deny file-write-unlink", `(require-all (subpath "/data/runs") (require-not (subpath (string-append (param "CARVE_3") (param "CWD") "/out"))))`, `(literal "/data")`)},
			once:    []string{`(literal "/private/tmp/x")`}},
	}
}

// notProfileCases are docs/reference.md#macos-cases cases that are not about a profile srtc emits,
// and where they are tested instead.
var notProfileCases = map[string]string{
	"M1":  "no restriction at all: a settings file always restricts the network (allowedDomains is required), so srt always wraps",
	"M7":  "network not restricted: as M1, never the case for a settings file",
	"M29": "symlinks resolved on disk: a host fact; the darwin runtime passes HOME and CWD with symlinks resolved, absolute symlinked paths are not resolved (README)",
	"M30": "the log tag from commandId: runtime/sandbox TestLogTag",
	"M31": "git.safeDirectories environment: runtime/sandbox TestDarwinEnv",
	"M32": "proxy environment with a token: runtime/sandbox TestDarwinEnv",
}

func TestMacOSSpecCases(t *testing.T) {
	cases := macCases()
	for i := 1; i <= 37; i++ {
		id := fmt.Sprintf("M%d", i)
		_, ok := cases[id]
		_, okA := cases[id+"a"]
		if _, skip := notProfileCases[id]; !ok && !okA && !skip {
			t.Errorf("spec case %s is not covered", id)
		}
	}
	for id, c := range cases {
		t.Run(id, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", c.dir, "macos", "profile.sb"))
			if err != nil {
				t.Fatalf("%v (go test ./golden/... -update writes the profile)", err)
			}
			p := string(b)
			at := 0
			for _, s := range c.ordered {
				i := strings.Index(p[at:], s)
				if i < 0 {
					if strings.Contains(p, s) {
						t.Errorf("%s: %q is out of order", c.dir, s)
					} else {
						t.Errorf("%s: missing %q", c.dir, s)
					}
					continue
				}
				at += i + len(s)
			}
			for _, s := range c.once {
				if n := strings.Count(p, s); n != 1 {
					t.Errorf("%s: %q appears %d times, want once", c.dir, s, n)
				}
			}
			for s, want := range c.count {
				if n := strings.Count(p, s); n != want {
					t.Errorf("%s: %q appears %d times, want %d", c.dir, s, n, want)
				}
			}
			for _, s := range c.not {
				if strings.Contains(p, s) {
					t.Errorf("%s: must not contain %q", c.dir, s)
				}
			}
			if c.check != nil {
				if err := c.check(p); err != nil {
					t.Errorf("%s: %v", c.dir, err)
				}
			}
		})
	}
}
