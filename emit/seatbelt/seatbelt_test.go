package seatbelt

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/internal/settingsgen"
	"srt.dev/schema"
)

// TestCheckerRejects makes sure the well-formedness checker can fail.
func TestCheckerRejects(t *testing.T) {
	head := "(version 1)\n(deny default (with message (param \"LOG_TAG\")))\n"
	bad := map[string]string{
		"unbalanced":        head + "(allow file-read* (subpath \"/a\")",
		"extra paren":       head + "(allow file-read*))",
		"open string":       head + "(allow file-read* (subpath \"/a))",
		"bad escape":        head + `(allow file-read* (subpath "/a\n"))`,
		"newline in string": head + "(allow file-read* (subpath \"/a\nb\"))",
		"unknown op":        head + "(allow file-everything)",
		"unknown filter":    head + `(allow file-read* (prefix "/a"))`,
		"unknown param":     head + `(allow file-read* (subpath (param "PATH")))`,
		"no version":        "(deny default)\n(allow file-read*)",
		"message not last":  head + `(allow file-read* (with message "x") (subpath "/a"))`,
		"long string":       head + `(allow file-read* (subpath "/` + strings.Repeat("a", MaxString) + `"))`,
		"bare string":       head + `(allow file-read* "/a")`,
	}
	for name, src := range bad {
		if _, err := checkProfile(src); err == nil {
			t.Errorf("%s: checkProfile accepted\n%s", name, src)
		}
	}
	if _, err := checkProfile(head + `(allow file-read* (subpath (string-append (param "HOME") "/a\"b\\c")) (regex #"^/dev/ttys"))`); err != nil {
		t.Errorf("a good profile was refused: %v", err)
	}
}

// TestGoldenProfilesWellFormed checks every golden macOS profile.
func TestGoldenProfilesWellFormed(t *testing.T) {
	files, err := filepath.Glob("../../golden/testdata/*/macos/profile.sb")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("found %d golden profiles, want at least 30", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := checkProfile(string(b)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// hostile are path pieces a profile must carry safely.
var hostile = []string{`"`, `\`, `é`, "\u2028", "🔑", "(", ")", "(x)+{y}|z$^.", "[WIP] ", "[a-c]", "[]", "*", "**", "?", "'", ";", "#\"", " ", "a", "b", "-", "\x7f"}

func randomPath(rng *rand.Rand) string {
	roots := []string{"/", "~/", "", "/tmp/", "/var/"}
	var b strings.Builder
	b.WriteString(roots[rng.Intn(len(roots))])
	for n := 1 + rng.Intn(4); n > 0; n-- {
		for k := 1 + rng.Intn(3); k > 0; k-- {
			b.WriteString(hostile[rng.Intn(len(hostile))])
		}
		if n > 1 {
			b.WriteByte('/')
		}
	}
	return b.String()
}

func rules(rng *rand.Rand, key string) []policy.PathRule {
	var out []policy.PathRule
	for i := rng.Intn(4); i > 0; i-- {
		literal := rng.Intn(5) == 0
		p, pattern := policy.Normalize(randomPath(rng), literal)
		out = append(out, policy.PathRule{Path: p, Pattern: pattern, Literal: literal, Origin: policy.Origin{Key: key}})
	}
	return out
}

// TestHostileProfiles emits profiles of generated policies whose paths are
// made of quotes, backslashes, non-ASCII, parentheses, brackets and regex
// metacharacters; every one must be well formed, and every path must come
// back out of the profile's strings as it went in: a literal path exactly,
// a pattern as a regex (Go's reading) that matches a path the glob names.
func TestHostileProfiles(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var profiles, strs int
	for i := 0; i < 400; i++ {
		p := &policy.Policy{Source: "hostile.json"}
		fs := &p.Filesystem
		fs.DenyRead, fs.AllowRead = rules(rng, "filesystem.denyRead"), rules(rng, "filesystem.allowRead")
		fs.AllowWrite, fs.DenyWrite = rules(rng, "filesystem.allowWrite"), rules(rng, "filesystem.denyWrite")
		fs.MandatoryScan = &policy.MandatoryScan{Files: policy.MandatoryFiles, Dirs: policy.MandatoryDirs, GitConfig: rng.Intn(2) == 0}
		p.Network.AllowUnixSockets = rules(rng, "network.allowUnixSockets")
		p.Network.AllowMachLookup = []string{"com.x\"y*", `a\b`}
		p.Process.AllowPty = rng.Intn(2) == 0
		b, err := Emit(p)
		if err != nil {
			t.Fatalf("Emit: %v", err)
		}
		if _, err := checkProfile(string(b)); err != nil {
			t.Fatalf("profile %d: %v\n%s", i, err, b)
		}
		profiles++
		forms, _ := readProfile(string(b))
		lits, regexes := strings_(forms)
		all := append(append(append(append([]policy.PathRule{}, fs.DenyRead...), fs.AllowRead...), fs.AllowWrite...), fs.DenyWrite...)
		for _, r := range all {
			root, rest := splitPath(r.Path)
			if !r.Pattern || r.Literal {
				want := r.Path.String()
				if root != "" {
					want = rest
				}
				if want != "" && !lits[want] {
					t.Errorf("profile %d: the literal %q is not among the profile's strings", i, want)
				}
				strs++
				continue
			}
			sample := rest
			if root == "" {
				sample = r.Path.String()
			}
			sample = policy.GlobSample(sample)
			found := false
			for _, re := range regexes {
				if ok, err := regexp.MatchString(re, sample); err == nil && ok {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("profile %d: no regex of the profile matches %q, a path the glob %q names", i, sample, r.Path)
			}
			strs++
		}
	}
	t.Logf("%d hostile profiles well formed; %d paths read back", profiles, strs)
}

// strings_ collects the decoded string literals of a profile, and the
// regexes among them: a literal regex, or for a regex after a root
// parameter, the part after it anchored with "^".
func strings_(forms []node) (lits map[string]bool, regexes []string) {
	lits = map[string]bool{}
	var walk func(n node, inRegex bool)
	walk = func(n node, inRegex bool) {
		if n.str != nil {
			lits[*n.str] = true
			if inRegex && *n.str != "^" {
				re := *n.str
				if !strings.HasPrefix(re, "^") {
					re = "^" + re
				}
				regexes = append(regexes, re)
			}
		}
		for _, c := range n.list {
			walk(c, inRegex || isForm(n, "regex"))
		}
	}
	for _, f := range forms {
		walk(f, false)
	}
	return lits, regexes
}

// TestControlCharactersRefused: a path Seatbelt may misread gets an error
// naming the setting, not a rule.
func TestControlCharactersRefused(t *testing.T) {
	for _, path := range []string{"/srv/tab\tx", "/srv/new\nline", "/srv/*\x01"} {
		p := &policy.Policy{}
		p.Filesystem.DenyRead = []policy.PathRule{{Path: policy.MustParsePath(path), Pattern: strings.Contains(path, "*"), Origin: policy.Origin{Key: "filesystem.denyRead[0]", Pos: "s.json:1:2"}}}
		_, err := Emit(p)
		var e *Error
		if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "s.json:1:2: filesystem.denyRead[0]: ") || !strings.Contains(err.Error(), "control character") {
			t.Errorf("Emit(deny %q) = %v, want an *Error naming the setting and the control character", path, err)
		}
	}
}

// TestDeterministic: the same settings give the same bytes, and no host
// fact (this machine's HOME, working directory) reaches the profile.
func TestDeterministic(t *testing.T) {
	data := []byte(`{"network":{"allowedDomains":["a.example"],"deniedDomains":[]},"filesystem":{"denyRead":["~/.ssh"],"allowWrite":["."],"denyWrite":[]}}`)
	p, d, err := compiler.CompileFile("s.json", data, schema.Options{OS: schema.OSPosix})
	if err != nil || d != nil {
		t.Fatal(err, d)
	}
	a, err := Emit(p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Emit(p)
	if string(a) != string(b) {
		t.Error("two emits of one policy differ")
	}
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	for _, fact := range []string{home, cwd} {
		if fact != "" && fact != "/" && strings.Contains(string(a), fact) {
			t.Errorf("the profile contains the host path %q", fact)
		}
	}
}

// BenchmarkEmit emits the profile of the golden typical project.
func BenchmarkEmit(b *testing.B) {
	data, err := os.ReadFile("../../golden/testdata/typical-project/settings.json")
	if err != nil {
		b.Fatal(err)
	}
	p, d, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
	if err != nil || d != nil {
		b.Fatal(err, d)
	}
	for i := 0; i < b.N; i++ {
		if _, err := Emit(p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDotDot: ".." is folded where it stays under its root, for paths and
// patterns, and never folded into the root when it climbs above it.
func TestDotDot(t *testing.T) {
	p := &policy.Policy{}
	o := policy.Origin{Key: "filesystem.denyRead"}
	p.Filesystem.DenyRead = []policy.PathRule{
		{Path: policy.MustParsePath("${CWD}/src/../.git"), Origin: o},
		{Path: policy.MustParsePath("${CWD}/src/../*.pem"), Pattern: true, Origin: o},
		{Path: policy.MustParsePath("/a/../b"), Origin: o},
		{Path: policy.MustParsePath("${CWD}/../secrets"), Origin: o},
		{Path: policy.MustParsePath("/tmp/x/../y"), Origin: o},
	}
	b, err := Emit(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(subpath (string-append (param "CWD") "/.git"))`, `(regex (string-append "^" (param "CWD_REGEX") "/[^/]*\\.pem(/.*)?$"))`, `(subpath "/b")`, `(subpath "/private/tmp/y")`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("missing %s", want)
		}
	}
	if strings.Contains(string(b), `"/secrets"`) {
		t.Errorf("${CWD}/../secrets was folded into ${CWD}/secrets")
	}
}

// BenchmarkEmitPathHeavy emits the profiles of path-heavy settings
// files: 200 domains and 1,300 or 3,900 path rules (docs/performance.md,
// the macOS answers).
func BenchmarkEmitPathHeavy(b *testing.B) {
	for _, n := range [][2]int{{325, 925}, {975, 2875}} {
		s := settingsgen.Scale(200)
		s.DenyRead, s.DenyWrite = n[0], n[1]
		b.Run(fmt.Sprintf("rules=%d", s.DenyRead+s.DenyWrite+s.AllowRead+s.AllowWrite), func(b *testing.B) {
			p, d, err := compiler.CompileFile("heavy.json", settingsgen.Generate(1, s), schema.Options{OS: schema.OSPosix})
			if err != nil || d != nil {
				b.Fatal(err, d)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Emit(p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
