//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"srt.dev/cmd/internal/cmdline"
	"strings"

	"srt.dev/runtime/placeholders"
	"srt.dev/runtime/quarantine"
	"srt.dev/runtime/sandbox"
)

// quarantineCmd is srt quarantine list|release ID...|drop ID...|check
func quarantineCmd(args []string, stdout, stderr io.Writer) (int, error) {
	noArgs := len(args) == 1 && (args[0] == "list" || args[0] == "check")
	withIDs := len(args) > 1 && (args[0] == "release" || args[0] == "drop")
	if !noArgs && !withIDs {
		return 0, fail("srt quarantine takes list, release ID..., drop ID... or check (got %q)", strings.Join(args, " ")).also(cmdline.Named("quarantine").Usage())
	}
	if args[0] == "check" {
		return 0, quarantineCheck(stdout, stderr)
	}
	dir, err := quarantine.DefaultDir()
	if err != nil {
		return 0, err
	}
	store, err := quarantine.Open(dir)
	if err != nil {
		return 0, err
	}
	if args[0] == "list" {
		items, err := store.List()
		if err != nil {
			return 0, err
		}
		// Paths are quoted: the names were chosen by a sandboxed command.
		for _, it := range items {
			content := fmt.Sprintf("content: %q", store.Data(it.ID))
			switch {
			case it.InPlace != "":
				content = fmt.Sprintf("renamed in place to %q beside it", it.InPlace)
			case it.Kind == "special":
				content = "removed (a FIFO, socket or device holds no content)"
			}
			fmt.Fprintf(stdout, "%s  %s  %q\n    %s\n    %s\n", it.ID, it.Time.Local().Format("2006-01-02 15:04:05"), it.Path, it.Why, content)
		}
		return 0, nil
	}
	var errs []error
	for _, id := range args[1:] {
		op, verb := store.Release, "released to"
		if args[0] == "drop" {
			op, verb = store.Drop, "dropped, was"
		}
		it, err := op(id)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		fmt.Fprintf(stdout, "%s %s %q\n", id, verb, it.Path)
	}
	return 0, errors.Join(errs...)
}

// quarantineCheck is srt quarantine check: it does the checks killed runs
// still owe, then checks again, without limits, every tree a run left
// unchecked, moving what it finds; a tree it can now vouch for is
// released for runs again. It fails with exitUnchecked while a tree stays
// unchecked.
func quarantineCheck(stdout, stderr io.Writer) error {
	reg, err := placeholders.Default()
	if err != nil {
		return err
	}
	if _, err := reg.Sweep(true); err != nil {
		fmt.Fprintf(stderr, "srt: warning: the checks of killed runs: %v\n", err)
	}
	trees, err := reg.UncheckedTrees()
	if err != nil {
		return err
	}
	if len(trees) == 0 {
		fmt.Fprintln(stdout, "srt: no tree is left unchecked: the check after every run vouched for what its command could write")
		return nil
	}
	var errs []error
	unchecked := false
	for _, u := range trees {
		roots := quoteAll(u.Check.Roots)
		fmt.Fprintf(stdout, "srt: checking %s, left unchecked by the run of %s\n", roots, u.Time.Local().Format("2006-01-02 15:04:05"))
		out, err := reg.Recheck(u, quarantine.NoLimits)
		for i, it := range out.Items {
			if i == maxListed {
				fmt.Fprintf(stdout, "srt:   and %d more (srt quarantine list shows them)\n", len(out.Items)-maxListed)
				break
			}
			fmt.Fprintf(stdout, "srt:   moved %q (%s): srt quarantine release %s\n", it.Path, it.Why, it.ID)
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %w", roots, err))
		case !out.Complete():
			fmt.Fprint(stderr, sandbox.UncheckedMessage(u.Check.Roots, out.Unchecked))
			unchecked = true
		case len(out.Items) == 0:
			fmt.Fprintf(stdout, "srt: %s checked: no protected name was planted; runs may start there again\n", roots)
		default:
			fmt.Fprintf(stdout, "srt: %s checked: %d moved to the quarantine; runs may start there again\n", roots, len(out.Items))
		}
	}
	if len(errs) == 0 && !unchecked {
		return nil
	}
	return (&failure{err: errors.Join(errs...)}).withStatus(exitUnchecked)
}

// maxListed is the most moved names srt quarantine check prints per tree.
const maxListed = 20

// quoteAll is the paths, each quoted, joined with commas.
func quoteAll(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = fmt.Sprintf("%q", p)
	}
	return strings.Join(q, ", ")
}
