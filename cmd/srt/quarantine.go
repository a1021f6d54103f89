//go:build linux

package main

import (
	"fmt"
	"io"

	"srt.dev/runtime/quarantine"
)

// quarantineCmd is srt quarantine list|release ID...|drop ID...
func quarantineCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || (args[0] == "list") != (len(args) == 1) || (args[0] != "list" && args[0] != "release" && args[0] != "drop") {
		fmt.Fprintln(stderr, "Usage: srt quarantine list | release ID... | drop ID...")
		return 2
	}
	dir, err := quarantine.DefaultDir()
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	store, err := quarantine.Open(dir)
	if err != nil {
		fmt.Fprintf(stderr, "Error: %v\n", err)
		return 1
	}
	if args[0] == "list" {
		items, err := store.List()
		if err != nil {
			fmt.Fprintf(stderr, "Error: %v\n", err)
			return 1
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
		return 0
	}
	code := 0
	for _, id := range args[1:] {
		op, verb := store.Release, "released to"
		if args[0] == "drop" {
			op, verb = store.Drop, "dropped, was"
		}
		it, err := op(id)
		if err != nil {
			fmt.Fprintf(stderr, "Error: %s: %v\n", id, err)
			code = 1
			continue
		}
		fmt.Fprintf(stdout, "%s %s %q\n", id, verb, it.Path)
	}
	return code
}
