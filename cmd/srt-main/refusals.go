package main

import (
	"fmt"
	"io"
	"os"
	"srt.dev/cmd/internal/cmdline"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/runtime/violations"
)

// maxRefusalLines bounds the lines printed after a command; --violations
// lists every refusal.
const maxRefusalLines = 10

// refusalLines are the lines srt prints after a command the sandbox
// refused something: one per refused host (and port), and per write the
// second layer refused where srt can tell (Linux), in the order first
// refused, each saying what was refused, which rule decided and which
// settings file to edit, and each starting with netpolicy.RefusedPrefix
// (docs/srt.md documents their form). They come from the record of the
// run's refusals, made while it ran: nothing is looked up after it.
func refusalLines(entries []violations.Entry) []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range entries {
		if e.Why == "" || seen[e.Why] {
			continue
		}
		seen[e.Why] = true
		out = append(out, e.Why)
	}
	if n := len(out); n > maxRefusalLines {
		out = append(out[:maxRefusalLines], fmt.Sprintf(netpolicy.RefusedPrefix+"%d more hosts or writes (--violations lists every refusal).", n-maxRefusalLines))
	}
	return out
}

// refusalsEnv names the variable that sets --refusals for a caller that
// cannot change srt's arguments; the option wins over it.
const refusalsEnv = "SRT_REFUSALS"

// showRefusals decides whether the refusal lines are printed: "always"
// (the default: an agent or a CI job that runs srt without a terminal
// reads them as a person does), "never", or "auto": only when stderr is a
// terminal.
func showRefusals(when string, stderr io.Writer) bool {
	switch when {
	case "never":
		return false
	case "auto":
	default:
		return true
	}
	f, ok := stderr.(*os.File)
	if !ok {
		return false
	}
	// A terminal is a character device (so is /dev/null, where the
	// lines are lost, as anything else written there).
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// refusalsWhen is --refusals as given, else SRT_REFUSALS, else "always".
func refusalsWhen(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if v := getenv(refusalsEnv); v != "" {
		return cmdline.ParseRefusals(refusalsEnv, v)
	}
	return "always", nil
}

// printRefusals writes the refusal lines, each on its own line.
func printRefusals(w io.Writer, entries []violations.Entry) {
	if lines := refusalLines(entries); len(lines) > 0 {
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
}

// unusedLoopbackLine is what srt says after a failed command about an
// allow rule for this host's loopback that no connection through the
// proxy used: the command may have connected directly, and found the
// sandbox's own loopback (Result.UnusedLoopback).
func unusedLoopbackLine(r policy.HostRule) string {
	return fmt.Sprintf("srt: %q (%s) allows this host's loopback only through srt's proxy, and nothing asked the proxy for it: "+
		"inside the sandbox the loopback is the sandbox's own, where nothing of this host listens, so a client that connects directly "+
		"(one that ignores HTTP_PROXY, as Go programs do for localhost and loopback addresses, or one that does not speak HTTP or SOCKS5) finds nothing there.",
		r.Entry, r.Origin.Key)
}

// printUnusedLoopback writes unusedLoopbackLine for each rule.
func printUnusedLoopback(w io.Writer, rules []policy.HostRule) {
	for _, r := range rules {
		fmt.Fprintln(w, unusedLoopbackLine(r))
	}
}
