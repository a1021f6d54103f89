package gitconfig

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestParse: expected answers written by hand from git-config(1) and
// config.c.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []Entry
		ok         bool
	}{
		{"init", "[core]\n\trepositoryformatversion = 0\n\tbare = false\n", []Entry{{"core.repositoryformatversion", "0"}, {"core.bare", "false"}}, true},
		{"subsection", "[remote \"origin\"]\n  url = https://x/y.git # c\n", []Entry{{"remote.origin.url", "https://x/y.git"}}, true},
		{"case and bool", "[Core]\nHooksPath = \".husky\"\nfsmonitor\n", []Entry{{"core.hookspath", ".husky"}, {"core.fsmonitor", "true"}}, true},
		{"continued value", "[core]\nfsmonitor = a\\\nb\n", []Entry{{"core.fsmonitor", "ab"}}, true},
		// A comment ends at the line's end, backslash or not: the next
		// line is a variable to git.
		{"comment ending in a backslash", "[core]\n# note \\\nfsmonitor = /x\n", []Entry{{"core.fsmonitor", "/x"}}, true},
		{"value comment ending in a backslash", "[core]\npager = less # \\\nfsmonitor = /x\n", []Entry{{"core.pager", "less"}, {"core.fsmonitor", "/x"}}, true},
		{"header line variable", "[core] fsmonitor = x\n", []Entry{{"core.fsmonitor", "x"}}, true},
		{"dotted section", "[Core.Sub]\nx = 1\n", []Entry{{"core.sub.x", "1"}}, true},
		{"escaped subsection", "[remote \"a\\\"b\\c\"]\nurl = u\n", []Entry{{"remote.a\"bc.url", "u"}}, true},
		{"crlf", "[core]\r\nfsmonitor = x\r\n", []Entry{{"core.fsmonitor", "x"}}, true},
		{"bom", "\xef\xbb\xbf[core]\nx = 1\n", []Entry{{"core.x", "1"}}, true},
		{"spaces inside", "[core]\nx =  a \t b  \n", []Entry{{"core.x", "a   b"}}, true},
		{"quoted spaces and escapes", "[core]\nx = \" a\\tb \"\n", []Entry{{"core.x", " a\tb "}}, true},
		{"no final newline", "[core]\nx = 1", []Entry{{"core.x", "1"}}, true},
		{"no section", "fsmonitor = x\n", []Entry{{"fsmonitor", "x"}}, true},
		{"open quote", "[core]\nfsmonitor = \"x\n", nil, false},
		{"bad escape", "[core]\nx = a\\q\n", nil, false},
		{"bad name", "[core]\n_x = 1\n", nil, false},
	} {
		got, ok := Parse([]byte(tc.text))
		if ok != tc.ok || (tc.ok && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%s: Parse = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// gitList is what the host's git reads from a configuration file: each
// variable as key=value (keys as git prints them), or ok false when git
// refuses the file.
func gitList(t *testing.T, dir string, text string) ([]string, bool) {
	f := filepath.Join(dir, "config")
	if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("git", "config", "--file", f, "--no-includes", "--list", "-z")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.Output()
	if err != nil {
		return nil, false
	}
	var list []string
	for _, rec := range strings.Split(string(out), "\x00") {
		if rec == "" {
			continue
		}
		k, v, hasValue := strings.Cut(rec, "\n")
		if !hasValue {
			v = "true"
		}
		list = append(list, k+"="+v)
	}
	return list, true
}

func parsedList(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key+"="+e.Value)
	}
	return out
}

// TestParseAgreesWithGit: the host's git and Parse read the same
// variables from hand-picked and generated text, and refuse the same.
func TestParseAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("SRT_REQUIRE_SANDBOX") != "" {
			t.Fatal("git is needed (apt-get install -y git)")
		}
		t.Skip("no git")
	}
	dir := t.TempDir()
	texts := []string{
		"[core]\n# c \\\nfsmonitor = /x\n",
		"[core]\n; c \\\nhooksPath = h\n",
		"[core]\nx = a # b \\\ny = 2\n",
		"[core]\nx = \"a # b\" \\\n c\n",
		"[a \"b\\\\c\"] x = 1\n",
		"[core]\n\tfsmonitor\n",
		"[core]x=1\n",
		"[core]\nx=1;y\n",
		"[ core ]\nx = 1\n",
		"[core \"\"]\nx = 1\n",
		"[co.re]\nX-y = \"\\n\"\n",
		"[core]\r\nx = a\r\n",
		"[core]\nx = a\rb\n",
	}
	alphabet := []string{"[", "]", "\"", "\\", "\n", "\r", " ", "\t", "#", ";", "=", "a", "b", "core", "x", ".", "-", "1", "[core]\n", "\\\n"}
	rnd := rand.New(rand.NewSource(1))
	for i := 0; i < 200; i++ {
		var b strings.Builder
		for n := rnd.Intn(14); n >= 0; n-- {
			b.WriteString(alphabet[rnd.Intn(len(alphabet))])
		}
		texts = append(texts, "[core]\n"+b.String())
	}
	for _, text := range texts {
		want, wantOK := gitList(t, dir, text)
		got, ok := Parse([]byte(text))
		if ok != wantOK || ok && !reflect.DeepEqual(parsedList(got), want) {
			t.Errorf("Parse(%q) = %q, %v; git reads %q, %v", text, parsedList(got), ok, want, wantOK)
		}
	}
}

// FuzzParseAgreesWithGit: on any text, Parse reads the variables the
// host's git reads, and refuses what git refuses; text Plain accepts git
// accepts. The check after a run reads configurations the command wrote:
// a variable git sees and Parse does not survives it.
func FuzzParseAgreesWithGit(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("SRT_REQUIRE_SANDBOX") != "" {
			f.Fatal("git is needed (apt-get install -y git)")
		}
		f.Skip("no git")
	}
	for _, s := range []string{
		"[core]\n# c \\\nfsmonitor = /x\n",
		"[core]\nx = \"a # b\" \\\n c\n",
		"[a \"b\\\\c\"] x = 1\n",
		"[core]\r\nx = a\r\n",
		"\xef\xbb\xbf[core]\n\thooksPath = ~/h\n[include]\npath = x\n",
		"[core]\n\tfsmonitor\n[Core \"Sub\"]\nA-b=\"\\t\\n\"\n",
		// Where Parse and git disagreed once: a variable before any
		// section, a subsection without a section name, a form feed (not
		// a space to git), a NUL in a value (the value ends there).
		"A", "[ \"\"]", "\f", "A=\x00",
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		want, wantOK := gitList(t, dir, string(data))
		got, ok := Parse(data)
		if ok != wantOK || ok && !reflect.DeepEqual(parsedList(got), want) {
			t.Fatalf("Parse(%q) = %q, %v; git reads %q, %v", data, parsedList(got), ok, want, wantOK)
		}
		if Plain(data) && !wantOK {
			t.Fatalf("Plain(%q), which git refuses", data)
		}
	})
}

// TestPlain: the plain form takes what git writes and nothing that could
// be read two ways.
func TestPlain(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"", true},
		{"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", true},
		{"[remote \"origin\"]\n\turl = https://example.com/a b.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n", true},
		{"[core]\n\tbare = false", false},           // no final newline
		{"[core]\n# c\n", false},                    // comment
		{"[core]\n\tx = a \\\n", false},             // continued
		{"[core]\n\tx = \"a\"\n", false},            // quotes
		{"[core]\r\n\tx = 1\r\n", false},            // carriage returns
		{"[core]\n\tx = a\tb\n", false},             // a tab git reads as a space
		{"[core]\n\tx = a ; b\n", false},            // a comment in a value
		{"[core] x = 1\n", false},                   // a variable on the header line
		{"[remote \"a\\\"b\"]\n\turl = u\n", false}, // escapes
		{"[core]\n\tx\n", false},                    // a variable without a value
		{"\xef\xbb\xbf[core]\n", false},             // a byte order mark
	} {
		if got := Plain([]byte(tc.text)); got != tc.want {
			t.Errorf("Plain(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestPlainAgreesWithGit: on every text Plain accepts, Parse reads what
// git reads.
func TestPlainAgreesWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git") // TestParseAgreesWithGit says what to install
	}
	dir := t.TempDir()
	rnd := rand.New(rand.NewSource(2))
	words := []string{"a", "b c", "x-y", "url", "é", "*", "+", ":", "/", "=", "  ", " "}
	n := 0
	for i := 0; n < 80 && i < 5000; i++ {
		var b bytes.Buffer
		fmt.Fprintf(&b, "[core]\n")
		for j := rnd.Intn(4); j >= 0; j-- {
			fmt.Fprintf(&b, "\t%s = %s%s\n", []string{"x", "y-1", "Z"}[rnd.Intn(3)], words[rnd.Intn(len(words))], words[rnd.Intn(len(words))])
		}
		if !Plain(b.Bytes()) {
			continue
		}
		n++
		want, wantOK := gitList(t, dir, b.String())
		got, ok := Parse(b.Bytes())
		if !ok || !wantOK || !reflect.DeepEqual(parsedList(got), want) {
			t.Errorf("plain %q: Parse = %q, %v; git reads %q, %v", b.String(), parsedList(got), ok, want, wantOK)
		}
	}
	if n < 40 {
		t.Fatalf("only %d plain texts generated", n)
	}
}
