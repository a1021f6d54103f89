package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"srt.dev/review/policytest"
	"srt.dev/review/query"
)

type testCmd struct {
	reviewFlags
	Format string `enum:"text,json" default:"text" help:"Output format (${enum})."`
	Tests  string `name:"tests" placeholder:"FILE" help:"The test file. Default: the settings file's name with .json replaced by .test (~/.srt-settings.test)."`
	Home   string `help:"Check for this home directory instead of the symbolic HOME root."`
	Cwd    string `help:"Check for this working directory instead of the symbolic CWD root."`
	File   string `arg:"" optional:"" name:"file" help:"Settings file, or REV:path from git. Default: ~/.srt-settings.json, as for srt and every srtc command."`
}

func (c *testCmd) Help() string {
	return `A test file holds one assertion per line, checked statically against the
compiled policy on each target ('#' starts a comment):

  read ~/.ssh/id_rsa: deny
  write ./src/x: allow
  connect github.com:443: allow
  [macos] unix-socket /var/run/docker.sock: deny

Exit status: 0 when every assertion holds, 1 when one fails (each failure
names the rule that decided), 2 for a usage or I/O error or a malformed
test file.`
}

func (c *testCmd) Run(s streams) error {
	src, name, err := loadSource(s, c.File, c.rules())
	if err != nil {
		return err
	}
	tests := c.Tests
	if tests == "" {
		file := c.File
		if file == "" {
			file = homeSettings()
		}
		tests = strings.TrimSuffix(file, filepath.Ext(file)) + ".test"
	}
	data, err := os.ReadFile(tests)
	if err != nil {
		fmt.Fprintf(s.stderr, "srtc: %s: %v (name the test file with --tests)\n", tests, unwrapPathError(err))
		return exitError(exitUsage)
	}
	as, err := policytest.Parse(tests, data)
	if err != nil {
		fmt.Fprintf(s.stderr, "%v\n", err)
		return exitError(exitUsage)
	}
	results := policytest.Run(src.Evaluator(c.Home, c.Cwd), as, c.targets())
	failed := 0
	for _, r := range results {
		if !r.Pass {
			failed++
		}
	}
	if c.Format == "json" {
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(struct {
			Settings string              `json:"settings"`
			Tests    string              `json:"tests"`
			Failed   int                 `json:"failed"`
			Results  []policytest.Result `json:"results"`
		}{name, tests, failed, results}); err != nil {
			return err
		}
	} else {
		for _, r := range results {
			if r.Pass {
				continue
			}
			fmt.Fprintf(s.stdout, "%s: FAIL on %s: %s: got %s by %s: %s\n", r.Pos, r.Target, r.Text, r.Got.Verdict(), query.FormatOrigin(r.Got.Rule), r.Got.Why)
		}
		fmt.Fprintf(s.stdout, "%s: %d assertions, %d checks on %s: %d passed, %d failed\n", tests, len(as), len(results), targetList(c.targets()), len(results)-failed, failed)
	}
	if failed > 0 {
		return exitError(exitFailure)
	}
	return nil
}

func targetList(ts []query.Target) string {
	var s []string
	for _, t := range ts {
		s = append(s, string(t))
	}
	return strings.Join(s, ",")
}

// unwrapPathError drops the path an *os.PathError repeats.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
