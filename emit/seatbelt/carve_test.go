package seatbelt_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"srt.dev/compiler"
	"srt.dev/emit/seatbelt"
	"srt.dev/internal/settingsgen"
	"srt.dev/schema"
)

// TestIndexedCarveAgrees compares the profile the emitter writes with its
// indexes (carve and late look only at the entries a deny may subtract or
// lie in) with the profile of its linear mode (every deny compared with
// every entry), byte for byte: on every golden settings file, on policies
// made of the agreement test's spellings (every root, patterns, sets,
// "..", the root itself) in longer lists, and on generated realistic
// policies (internal/settingsgen).
func TestIndexedCarveAgrees(t *testing.T) {
	compare := func(name string, data []byte) bool {
		t.Helper()
		p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diags != nil {
			return false
		}
		fast, ferr := seatbelt.Emit(p)
		slow, serr := seatbelt.EmitLinear(p)
		if fmt.Sprint(ferr) != fmt.Sprint(serr) {
			t.Errorf("%s: error %v (indexed), %v (linear)", name, ferr, serr)
		}
		if !bytes.Equal(fast, slow) {
			t.Errorf("%s: the indexed profile differs from the linear one at line %d\n%s", name, firstDiff(fast, slow), data)
		}
		return true
	}
	dirs, err := filepath.Glob("../../golden/testdata/*/settings.json")
	if err != nil || len(dirs) < 30 {
		t.Fatalf("found %d golden settings files (%v), want at least 30", len(dirs), err)
	}
	for _, f := range dirs {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		compare(f, data)
	}
	rng := rand.New(rand.NewSource(7))
	valid := 0
	for i := range 120 {
		if compare(fmt.Sprintf("generated %d", i), longSettings(rng)) {
			valid++
		}
	}
	if valid < 80 {
		t.Errorf("only %d of 120 generated settings were valid", valid)
	}
	for _, n := range []int{64, 256, 600} {
		for seed := range uint64(2) {
			compare(fmt.Sprintf("settingsgen %d seed %d", n, seed), settingsgen.Generate(seed+1, settingsgen.Scale(n)))
		}
	}
}

// longSettings is a policy of the agreement test's spellings, with up to
// 30 entries in each list.
func longSettings(rng *rand.Rand) []byte {
	pick := func(max int, allow bool) []any {
		out := []any{}
		for i := rng.Intn(max + 1); i > 0; i-- {
			s := genPaths[rng.Intn(len(genPaths))]
			if allow && rng.Intn(6) == 0 {
				s = allowOnlyPaths[rng.Intn(len(allowOnlyPaths))]
			}
			if rng.Intn(8) == 0 {
				out = append(out, map[string]any{"path": s, "literal": true})
			} else {
				out = append(out, s)
			}
		}
		return out
	}
	fs := map[string]any{"denyRead": pick(30, false), "allowRead": pick(30, true), "allowWrite": pick(30, true), "denyWrite": pick(20, false)}
	if rng.Intn(10) == 0 {
		fs["disabled"] = true
	}
	s := map[string]any{"network": map[string]any{"allowedDomains": []string{"example.com"}, "deniedDomains": []string{}}, "filesystem": fs}
	if rng.Intn(2) == 0 {
		s["credentials"] = map[string]any{"files": []any{
			map[string]any{"path": "~/.netrc", "mode": "deny"},
			map[string]any{"path": "./.env.local", "mode": "mask", "extract": "token=(\\S+)"},
		}, "allowPlaintextInject": true}
	}
	b, _ := json.Marshal(s)
	return b
}

func firstDiff(a, b []byte) int {
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	for i := range min(len(la), len(lb)) {
		if !bytes.Equal(la[i], lb[i]) {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
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
