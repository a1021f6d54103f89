//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"srt.dev/internal/testenv"
	"srt.dev/runtime/sandbox"
)

// exitExample is one example of the table of exit statuses in
// docs/srt.md: a shell command line and the status it exits with.
type exitExample struct {
	cmd  string
	want int
}

// exitExamples reads the examples of docs/srt.md's table of exit
// statuses: each "`CMD` exits N" of its rows.
func exitExamples(t *testing.T) []exitExample {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "srt.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Exit status\n")
	if !ok {
		t.Fatal("docs/srt.md has no section Exit status")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []exitExample
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)` exits (\\d+)").FindAllStringSubmatch(line, -1) {
			n, _ := strconv.Atoi(m[2])
			out = append(out, exitExample{m[1], n})
		}
	}
	return out
}

// TestExitStatus runs every example of docs/srt.md's table of exit
// statuses as written, with the srt binary, in a directory of its own
// with a w.json that allows writing it, and a home and state of its own.
func TestExitStatus(t *testing.T) {
	requireSandbox(t)
	bin := binDir
	examples := exitExamples(t)
	// A case of each kind the table must keep.
	for _, want := range []string{"srt -c 'exit 3'", "srt -c 'kill -KILL $$'", "srt -- no-such-program", "srt --bogus true",
		"srt --settings missing.json true", "srt quarantine bogus", "srt quarantine release no-such-id", "srt proxy --bogus",
		"srt proxy --listen 127.0.0.1:0 --decider-fd 99"} {
		found := false
		for _, e := range examples {
			found = found || e.cmd == want
		}
		if !found {
			t.Errorf("the table of exit statuses in docs/srt.md has no example %q", want)
		}
	}
	for _, e := range examples {
		t.Run(e.cmd, func(t *testing.T) {
			dir, home, state := testDir(t), testDir(t), testDir(t)
			testenv.WriteFile(t, filepath.Join(dir, "w.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`), 0o644)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "/bin/sh", "-c", e.cmd)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home,
				"XDG_STATE_HOME="+state, "XDG_RUNTIME_DIR="+state)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				t.Fatal(err)
			}
			if got := cmd.ProcessState.ExitCode(); got != e.want {
				t.Errorf("%s: exit %d, want %d\nstderr:\n%s", e.cmd, got, e.want, &stderr)
			}
		})
	}
}

// TestReport checks the one error path: the prefix on each error line,
// the lines after, and the status of each kind of error.
func TestReport(t *testing.T) {
	for _, tc := range []struct {
		name   string
		prefix string
		code   int
		err    error
		want   string
		status int
	}{
		{"no error", errorPrefix, 3, nil, "", 3},
		{"an error", errorPrefix, 0, errors.New("no such file"), "Error: no such file\n", exitFailure},
		{"joined", errorPrefix, 0, errors.Join(errors.New("a: bad"), errors.New("b: worse")), "Error: a: bad\nError: b: worse\n", exitFailure},
		{"more lines", errorPrefix, 0, fail("bad %s", "thing").also("what to do"), "Error: bad thing\nwhat to do\n", exitFailure},
		{"said already", errorPrefix, 0, &failure{}, "", exitFailure},
		{"proxy usage", proxyPrefix, 0, proxyUsageError(errors.New("unknown argument")), "srt proxy: unknown argument (see srt proxy --help)\n", exitProxyUsage},
		{"unchecked tree", errorPrefix, 0, fmt.Errorf("run: %w", &sandbox.UncheckedError{}), "Error: run: " + (&sandbox.UncheckedError{}).Error() + "\n", exitUnchecked},
		{"status kept", errorPrefix, 0, fail("the audit log is incomplete").withStatus(3), "Error: the audit log is incomplete\n", 3},
	} {
		var b bytes.Buffer
		if got := report(&b, tc.prefix, tc.code, tc.err); got != tc.status || b.String() != tc.want {
			t.Errorf("%s: report = %d, %q; want %d, %q", tc.name, got, b.String(), tc.status, tc.want)
		}
	}
}
