package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"srt.dev/review/policydiff"
	"srt.dev/review/query"
)

// exitWider is diff's status when NEW widens access, so that CI can ask
// for a second reviewer.
const exitWider = 3

type diffCmd struct {
	reviewFlags
	Format string `enum:"text,json" default:"text" help:"Output format (${enum})."`
	Old    string `arg:"" name:"old" help:"The old settings: a file, or REV:path read with git show (HEAD:.srt-settings.json)."`
	New    string `arg:"" name:"new" help:"The new settings: a file, or REV:path."`
}

func (c *diffCmd) Help() string {
	return `Compares the two policies by what they allow, not by their text: the same
questions (read and write every path either names, connect to every host,
use every socket, each switch) are asked of both on each target, and every
answer that changed is listed as wider (NEW allows what OLD denied) or
stricter. Exit status: 0 when nothing widens, 3 when NEW widens access
anywhere, 1 when a file is invalid, 2 for a usage or I/O error.`
}

func (c *diffCmd) Run(s streams) error {
	old, oldName, err := loadSource(s, c.Old, c.rules())
	if err != nil {
		return err
	}
	nw, newName, err := loadSource(s, c.New, c.rules())
	if err != nil {
		return err
	}
	changes := policydiff.Diff(old, nw, c.targets())
	if c.Format == "json" {
		enc := json.NewEncoder(s.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if changes == nil {
			changes = []policydiff.Change{}
		}
		if err := enc.Encode(struct {
			Old     string              `json:"old"`
			New     string              `json:"new"`
			Wider   bool                `json:"wider"`
			Changes []policydiff.Change `json:"changes"`
		}{oldName, newName, policydiff.Wider(changes), changes}); err != nil {
			return err
		}
	} else {
		c.text(s, oldName, newName, changes)
	}
	if policydiff.Wider(changes) {
		return exitError(exitWider)
	}
	return nil
}

func (c *diffCmd) text(s streams, oldName, newName string, changes []policydiff.Change) {
	if len(changes) == 0 {
		fmt.Fprintf(s.stdout, "%s -> %s: no change in what the policy allows\n", oldName, newName)
		return
	}
	for _, wider := range []bool{true, false} {
		var part []policydiff.Change
		for _, ch := range changes {
			if ch.Wider == wider {
				part = append(part, ch)
			}
		}
		if len(part) == 0 {
			continue
		}
		if wider {
			fmt.Fprintf(s.stdout, "WIDER in %s (allowed now, denied in %s):\n", newName, oldName)
		} else {
			fmt.Fprintf(s.stdout, "STRICTER in %s (denied now, allowed in %s):\n", newName, oldName)
		}
		tw := tabwriter.NewWriter(s.stdout, 0, 0, 2, ' ', 0)
		for _, ch := range part {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t(was: %s)\n", ch.Target, ch.Kind, ch.Subject, query.FormatOrigin(ch.New.Rule), query.FormatOrigin(ch.Old.Rule))
		}
		tw.Flush()
	}
}
