// Package warmwire is what srt's two programs say to each other about
// the warm server (docs/srt.md#warm-start): srt, the front, hands a
// command to the warm server that srt-main runs, and starts that server
// when there is none. One home for the protocol, and for which commands
// the server runs.
package warmwire

import (
	"srt.dev/cmd/internal/cmdline"
)

// Arg, as argv[1] of srt-main, runs the warm server: Arg SOCKET -- ARGS,
// where ARGS are the options of the srt that started it (its command
// line without the command: cmdline.Options.Options).
const Arg = "__srt_warm__"

// ReadyFD is the descriptor the warm server says it listens on: the srt
// that starts it waits for that line.
const ReadyFD = 3

// A Request is what srt sends, with its standard descriptors (SCM_RIGHTS):
// its arguments, working directory and environment.
type Request struct {
	Args []string `json:"args"`
	Cwd  string   `json:"cwd"`
	Env  []string `json:"env"`
}

// A Reply is what the server sends: the command's exit status, or why
// srt is to run the command without it (Cold).
type Reply struct {
	Code *int   `json:"code,omitempty"`
	Cold string `json:"cold,omitempty"`
}

// A Signal is a signal srt relays to the command.
type Signal struct {
	Signal int `json:"signal"`
}

// WhyNot says why the warm server does not run srt with args, or ""
// when it does: it runs srt itself with a command, and nothing else (a
// subcommand, --help or --version, or an error in the command line is
// srt-main's to handle); not --control-fd, a descriptor of the client
// process the server cannot read.
func WhyNot(args []string) string {
	c, rest := cmdline.Of(args)
	if c.Name != "" {
		return "srt " + c.Name + " is not a command the warm server runs"
	}
	o, err := cmdline.Parse(rest, c)
	switch {
	case err != nil:
		return "the command line is not one srt runs: " + err.Error()
	case o.Ask != cmdline.AskRun:
		return "--help and --version are answered by srt itself"
	case o.ControlFD != 0:
		return "--control-fd is read by srt itself"
	case len(o.Argv) == 0 && o.ShellCmd == "":
		return "no command"
	}
	return ""
}
