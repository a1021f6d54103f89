package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"srt.dev/compiler/policy"
	"srt.dev/review/policytest"
	"srt.dev/review/query"
)

type explainCmd struct {
	reviewFlags
	Format     string   `enum:"text,json" default:"text" help:"Output format (${enum})."`
	Home       string   `help:"Answer for this home directory instead of the symbolic HOME root."`
	Cwd        string   `help:"Answer for this working directory instead of the symbolic CWD root."`
	Read       []string `name:"read" placeholder:"PATH" help:"May the command read PATH? (repeatable)"`
	Write      []string `name:"write" placeholder:"PATH" help:"May the command write PATH? (repeatable)"`
	Connect    []string `name:"connect" placeholder:"HOST[:PORT]" help:"May the command connect to HOST (port 443 when omitted)? (repeatable)"`
	UnixSocket []string `name:"unix-socket" placeholder:"PATH" help:"May the command use the unix socket at PATH? (repeatable)"`
	File       string   `arg:"" optional:"" name:"file" help:"Settings file, or REV:path from git. Default: ~/.srt-settings.json (the built-in defaults when it does not exist)."`
}

func (c *explainCmd) Help() string {
	return `Without a query, prints what the policy exposes on each target: every path,
host and socket a rule names, with the verdict and the setting that decides
it (file:line:col, or default or mandatory), and the process switches.
With --read, --write, --connect or --unix-socket, answers only those
questions. Answers come from the policy and each platform's semantics; the
Linux ones are checked against bubblewrap in srt's tests, the macOS and
Windows ones follow the specifications (no such machine checks them).`
}

// question is one query and its answers.
type question struct {
	Kind    string   `json:"kind"`
	Subject string   `json:"subject"`
	Answers []answer `json:"answers"`
}

type answer struct {
	Target query.Target `json:"target"`
	query.Decision
}

func (c *explainCmd) Run(s streams) error {
	src, name, err := loadSource(s, c.File, c.rules())
	if err != nil {
		return err
	}
	e := src.Evaluator(c.Home, c.Cwd)
	notes := c.hostNotes(src.Policy)
	var qs []question
	for _, q := range []struct {
		verb string
		subs []string
	}{{"read", c.Read}, {"write", c.Write}, {"connect", c.Connect}, {"unix-socket", c.UnixSocket}} {
		for _, sub := range q.subs {
			if q.verb == "connect" {
				if _, _, err := query.SplitHostPort(sub); err != nil {
					fmt.Fprintf(s.stderr, "srtc: --connect %v\n", err)
					return exitError(exitUsage)
				}
			}
			qu := question{Kind: q.verb, Subject: sub}
			asked := sub
			if q.verb != "connect" && c.Home == "" && c.Cwd == "" {
				asked = symbolic(sub)
			}
			for _, t := range c.targets() {
				qu.Answers = append(qu.Answers, answer{t, policytest.Ask(e, q.verb, asked, t)})
			}
			qs = append(qs, qu)
		}
	}
	if c.Format == "json" {
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		out := struct {
			File      string       `json:"file"`
			Queries   []question   `json:"queries,omitempty"`
			Summary   []query.Line `json:"summary,omitempty"`
			Symbolic  bool         `json:"symbolic"`
			Unchecked []string     `json:"unverifiedTargets"`
			Host      []string     `json:"hostNotes,omitempty"`
		}{File: name, Queries: qs, Symbolic: c.Home == "" && c.Cwd == "", Unchecked: []string{"macos", "windows"}, Host: notes}
		if len(qs) == 0 {
			out.Summary = e.Summary(c.targets())
		}
		return enc.Encode(out)
	}
	defer writeHostNotes(s.stdout, notes)
	if len(qs) > 0 {
		writeQuestions(s.stdout, qs)
		return nil
	}
	fmt.Fprintf(s.stdout, "%s: what the sandbox exposes", name)
	if c.Home == "" && c.Cwd == "" {
		fmt.Fprintf(s.stdout, " (${HOME} and ${CWD}: the home and working directories)")
	}
	fmt.Fprintln(s.stdout)
	writeSummary(s.stdout, e.Summary(c.targets()))
	return nil
}

// hostNotes say what srt does on this host (the --home and --cwd given,
// else srtc's own) about the policy's directories: an allowWrite
// directory that does not exist yet, which srt creates before the run or
// leaves unwritable, and a working directory a denyRead hides.
func (c *explainCmd) hostNotes(p *policy.Policy) []string {
	home, cwd := c.Home, c.Cwd
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	if home == "" || cwd == "" {
		return nil
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	var out []string
	if d, ok := policy.CwdHidden(p, home, cwd); ok {
		out = append(out, fmt.Sprintf("%s: hides the working directory %s: srt cannot start a command there", query.FormatOrigin(d.Origin), cwd))
	}
	for _, d := range policy.WriteDirs(p, home, cwd) {
		switch {
		case exists(d.Path), d.Root != "" && !exists(d.Root):
		case d.Create:
			out = append(out, fmt.Sprintf("%s: %s does not exist: srt creates it (a directory) before the run", query.FormatOrigin(d.Rule.Origin), d.Path))
		default:
			out = append(out, fmt.Sprintf("%s: %s does not exist, and srt does not create it (%s): not writable", query.FormatOrigin(d.Rule.Origin), d.Path, d.Why))
		}
	}
	return out
}

func writeHostNotes(w io.Writer, notes []string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nOn this host:")
	for _, n := range notes {
		fmt.Fprintln(w, "  "+n)
	}
}

func writeQuestions(w io.Writer, qs []question) {
	for _, q := range qs {
		fmt.Fprintf(w, "%s %s\n", q.Kind, q.Subject)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, a := range q.Answers {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", a.Target, a.Verdict(), query.FormatOrigin(a.Rule), a.Why)
		}
		tw.Flush()
	}
}

func writeSummary(w io.Writer, lines []query.Line) {
	var tw *tabwriter.Writer
	var cur query.Target
	for _, l := range lines {
		if l.Target != cur {
			if tw != nil {
				tw.Flush()
			}
			cur = l.Target
			fmt.Fprintf(w, "\n%s\n", strings.ToUpper(string(cur)))
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", l.Kind, l.Subject, l.Verdict(), query.FormatOrigin(l.Rule), l.Why)
	}
	if tw != nil {
		tw.Flush()
	}
}
