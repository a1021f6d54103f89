// Package cmdline is srt's command line: its commands, the options of
// srt and srt run, the parser of those options, and every help text, each
// written once in the tables below. The parser is written by hand (see
// Parse). Both of srt's programs read it: srt, the front, which hands a
// command to the warm server or starts srt-main, and srt-main, which does
// the work.
package cmdline

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// A Command is one of srt's commands, named by the first word of the
// command line; srt itself, with no such word, runs a command in the
// sandbox.
type Command struct {
	Name string // "" for srt itself
	// synopsis is its command lines, one a line, without "Usage: "; a
	// line that starts with a space continues the one before.
	Synopsis string
	// summary is what srt --help says of it ("" for srt itself).
	Summary string
	// about is what its help says after the synopsis.
	About string
}

// Commands are srt's commands, srt itself first; srt --help lists them
// in this order.
var Commands = []*Command{
	{
		Synopsis: "srt [options] [--] command [args...]\nsrt [options] -c 'shell command'",
		About: `Runs the command in a sandbox: it can read, write and reach only what the
settings file allows (see 'srtc validate' and 'srtc compile').`,
	},
	{
		Name:     "run",
		Synopsis: "srt run --plan DIR [--dry-run] [options] [--] command [args...]\nsrt run --plan DIR [--dry-run] [options] -c 'shell command'",
		Summary:  "srt run runs a directory written by 'srtc compile' (srt run --help).",
		About: `Runs the command in the sandbox of a plan: DIR is a directory written by
'srtc compile', run as it is. srt checks every file's checksum first, and
runs only the plan this machine trusts in DIR: the one srtc compile last
wrote there, or the one trusted there with srt trust DIR after review (a
sandboxed run that can write the directory can rewrite a plan, checksums
included, or put back an older or another directory's plan). DIR is named
by its own path: srt follows no symbolic link to a plan.`,
	},
	{
		Name:     "trust",
		Synopsis: "srt trust DIR...",
		Summary:  "srt trust records plans as reviewed and trusted here (srt trust --help).",
		About: `Records each plan directory (written by srtc compile) as trusted on this
machine: srt run --plan runs only such plans. Review a plan before you
trust it (git diff DIR, srtc explain DIR): a sandboxed run that could
write the directory could have rewritten it, checksums included. Each
directory trusts one plan, by content (the SHA-256 of its plan.json, which
holds the checksum of every other file), replacing the one trusted there
before: after any change, trust it again; a plan moved or copied to
another directory is trusted there only once trusted there. srtc compile
trusts what it writes in its directory, when run outside a sandbox.`,
	},
	{
		Name:     "doctor",
		Synopsis: "srt doctor",
		Summary:  "srt doctor checks what this host allows and says how to fix what it does not.",
		About: `Checks what this host allows srt to do (bubblewrap, user and network
namespaces, seccomp, Landlock, the AppArmor user-namespace restriction)
and that srt finds srtc, which compiles the settings of every run, and
prints, for each failed check, how to fix it. Exit status 1 when a check
fails.`,
	},
	{
		Name:     "quarantine",
		Synopsis: "srt quarantine list | release ID... | drop ID... | check",
		Summary: `srt quarantine lists, puts back or deletes the protected names (git hooks
and configuration, shell start-up files, editor settings) that a sandboxed
command wrote and srt moved aside when it ended; srt quarantine check
checks again, without limits, a tree whose check after a run could not
vouch for everything.`,
		About: `The protected names (git hooks and configuration, shell start-up files,
editor settings) that a sandboxed command wrote, srt moves aside when the
command ends, into the quarantine.

  list          each name in the quarantine: its ID, when and why it was
                moved, and what it held
  release ID... put each back where it was
  drop ID...    delete each
  check         check again, without limits, each tree whose check after
                a run could not vouch for everything; runs start there
                again once it can`,
	},
	{
		Name:     "proxy",
		Synopsis: "srt proxy (--listen HOST:PORT | --listen-fd N)\n          (--decider-fd N | --decider-in N --decider-out N) [options]",
		Summary: `srt proxy runs only the HTTP proxy, with an external program deciding each
request (srt proxy --help).`,
		About: `Runs only the HTTP proxy, and puts every request to an external decider
(protocol v1: 4-byte big-endian length, then one JSON object). See
docs/srt-proxy.md.

  --listen HOST:PORT        listen on a loopback address (port 0: any free one)
  --listen-any-interface    allow --listen on a non-loopback address
  --listen-fd N             serve the listening socket inherited as descriptor N
  --decider-fd N            the decider is at the other end of socket N
  --decider-in N, --decider-out N
                            read the decider's frames from N, write to N
  --lifeline-fd N           exit when descriptor N reaches end of file
  --ca-fd N                 read a PEM CA certificate and its key from N (to
                            end of file) and terminate CONNECTs with it;
                            without it every CONNECT is refused
  --strip-response-header NAME[,NAME...]
                            remove these headers from responses (repeatable)
  --plaintext-header-set    let the decider add headers to plain HTTP requests
  --debug                   debug lines on stderr
  --version                 print "srt-proxy <version>" and exit

Environment: SRT_PROXY_REPORT_RSS_MS=N prints "srt-proxy rss <bytes>" on
stderr every N ms.
Exit status: 0 after the lifeline closes or a signal, 1 when the decider
goes or breaks the protocol (or another failure), 2 for a usage error.`,
	},
}

// Of is the command args name, and the arguments that follow its name:
// srt itself unless the first word names one of its commands.
func Of(args []string) (*Command, []string) {
	if len(args) > 0 {
		for _, c := range Commands[1:] {
			if c.Name == args[0] {
				return c, args[1:]
			}
		}
	}
	return Commands[0], args
}

// Named is the command called name.
func Named(name string) *Command {
	for _, c := range Commands {
		if c.Name == name {
			return c
		}
	}
	panic("srt has no command " + name)
}

// RunsCommand reports whether c runs a command in the sandbox (srt
// itself and srt run), and so takes the options below.
func (c *Command) RunsCommand() bool { return c.Name == "" || c.Name == "run" }

// Usage is the synopsis as the first lines of a help: "Usage: " before
// the first line, the others aligned under it.
func (c *Command) Usage() string {
	return "Usage: " + strings.ReplaceAll(c.Synopsis, "\n", "\n       ")
}

// Help is what c --help prints.
func (c *Command) Help() string {
	var b strings.Builder
	b.WriteString("Usage: ")
	if c.Name == "" {
		for i, o := range Commands {
			if i > 0 {
				b.WriteString("\n       ")
			}
			b.WriteString(strings.ReplaceAll(o.Synopsis, "\n", "\n       "))
		}
	} else {
		b.WriteString(strings.ReplaceAll(c.Synopsis, "\n", "\n       "))
	}
	b.WriteString("\n\n" + c.About + "\n")
	if !c.RunsCommand() {
		return b.String()
	}
	b.WriteString("\nOptions (recognised before the first command word or \"--\"):\n")
	for _, o := range srtOptions {
		if o.takenBy(c) {
			b.WriteString(o.helpLines())
		}
	}
	if c.Name == "" {
		var names []string
		for _, o := range Commands[1:] {
			b.WriteString("\n" + o.Summary)
			names = append(names, o.Name)
		}
		fmt.Fprintf(&b, "\nTo run a program called %s or %s, write srt -- %s.\n",
			strings.Join(names[:len(names)-1], ", "), names[len(names)-1], names[0])
	}
	b.WriteString("\n" + ExitStatus)
	return b.String()
}

const ExitStatus = `Exit status: the command's; 128+N when signal N killed it; 127 when there
is no such command, 126 when it cannot be run; 1 when srt itself fails
(invalid settings, no bubblewrap, ...) or its command line is wrong; 125
when the check after the run could not vouch for everything the command
could write, or an earlier run left the tree so (run srt quarantine
check).
`

// An Ask is what the command line of srt or srt run asks for.
type Ask uint8

const (
	AskRun     Ask = iota // run the command in the sandbox
	AskHelp               // print the command's help
	AskVersion            // print srt's version
)

// Options are what the command line of srt or srt run says.
type Options struct {
	Ask        Ask
	Settings   string
	ShellCmd   string
	Debug      bool
	ControlFD  int // 0: none
	Violations bool
	Refusals   string // --refusals: always, never or auto; "" when not given
	AuditLog   string
	Argv       []string
	Args       []string // all of srt's arguments, as given
	// Options are the words of Args that are options, -c and its value
	// aside: the command line without the command.
	Options []string
	// srt run: the artifact directory, and --dry-run.
	Plan   string
	DryRun bool
}

// An option is one of the options of srt and srt run: what Parse reads
// and what their help lists.
type option struct {
	short, long string // "-s", "--settings"; either may be ""
	// value names the option's value in the help; "" when it takes
	// none. An optional value is in brackets ("[=WHEN]"): without
	// "=", the next word is the value only when implied accepts it.
	value string
	help  string // its lines in the help, wrapped
	// only names the one command that takes the option ("" is srt
	// itself); "-" stands for both srt and srt run.
	only string
	// elsewhere is what srt says when a command other than only is
	// given the option ("": that it is unknown).
	elsewhere string
	// implied is the value of an optional value left out.
	implied string
	// accepts reports whether the word after the option is its
	// optional value.
	accepts func(string) bool
	set     func(o *Options, v string) error
}

// errEmptySettings refuses --settings "": the reference reads it as no
// flag at all, which silently runs with other rules than the caller named.
var errEmptySettings = errors.New(`--settings "" names no file: give the settings file's path, or leave the option out to use ~/.srt-settings.json`)

// srtOptions are the options of srt and srt run, in the order of their
// help.
var srtOptions = []*option{
	{short: "-s", long: "--settings", value: "FILE",
		elsewhere: "srt run runs the policy compiled in the plan; --settings does not apply (compile the settings with srtc compile)",
		help: `settings file (default: ~/.srt-settings.json; when that
file does not exist, the built-in defaults apply:
no network, no writes outside the scratch paths).
A project's own .srt-settings.json is used only when
named here; srt says when it leaves one out`,
		set: func(o *Options, v string) error {
			if v == "" {
				return errEmptySettings
			}
			o.Settings = v
			return nil
		}},
	{long: "--plan", value: "DIR", only: "run", help: "the plan directory",
		set: func(o *Options, v string) error { o.Plan = v; return nil }},
	{long: "--dry-run", only: "run",
		help: `print the bubblewrap command line, one word a line
with the line of linux/bwrap.args it came from,
instead of running it`,
		set: func(o *Options, _ string) error { o.DryRun = true; return nil }},
	{short: "-c", value: "CMD", only: "-", help: "run CMD with /bin/sh -c",
		set: func(o *Options, v string) error { o.ShellCmd = v; return nil }},
	{long: "--control-fd", value: "N", only: "-",
		help: `read new settings from descriptor N (>= 3, inherited
open for reading: srt --control-fd 9 ... 9< FILE)
while the command runs: one JSON settings document
per line, each replacing the whole configuration;
the network rules apply to the next connection,
file-system rules cannot change in a running sandbox`,
		set: func(o *Options, v string) (err error) { o.ControlFD, err = ParseFD(v); return err }},
	{long: "--violations", only: "-",
		help: `after the command, print the connections and
the writes the sandbox refused as a
<sandbox_violations> block on stderr (on Linux:
the writes its mounts refused, for any user, and,
as root with the kernel's audit on, those its
second layer refused)`,
		set: func(o *Options, _ string) error { o.Violations = true; return nil }},
	{long: "--refusals", value: "[=WHEN]", only: "-", implied: "always", accepts: isRefusalsWhen,
		help: `after the command, print on stderr one line per host
(or write) the sandbox refused, starting "srt sandbox
refused ", with the rule that decided and the file
to edit. WHEN: always (the default), never, or auto
(only when stderr is a terminal); also written
--refusals WHEN, or set by SRT_REFUSALS=WHEN`,
		set: func(o *Options, v string) (err error) { o.Refusals, err = ParseRefusals("--refusals", v); return err }},
	{long: "--audit-log", value: "FILE", only: "-",
		help: `append every network decision, allowed or refused,
and the refused writes --violations lists, to FILE
as JSON lines`,
		set: func(o *Options, v string) error { o.AuditLog = v; return nil }},
	{short: "-d", long: "--debug", only: "-", help: "debug lines on stderr (also: SRT_DEBUG=1)",
		set: func(o *Options, _ string) error { o.Debug = true; return nil }},
	{short: "-h", long: "--help", only: "-", help: "this help",
		set: func(o *Options, _ string) error { o.Ask = AskHelp; return nil }},
	{short: "-V", long: "--version", only: "-", help: "the version",
		set: func(o *Options, _ string) error { o.Ask = AskVersion; return nil }},
}

// takenBy reports whether c takes the option.
func (o *option) takenBy(c *Command) bool { return o.only == "-" || o.only == c.Name }

// helpLines are the option's lines in the help: its names and value,
// then its help in a column.
func (o *option) helpLines() string {
	names := strings.Trim(o.short+", "+o.long, ", ")
	if o.value != "" && !strings.HasPrefix(o.value, "[") {
		names += " "
	}
	names += o.value
	const column = 22
	if len(names) >= column {
		names += "\n" + strings.Repeat(" ", column)
	}
	return fmt.Sprintf("  %-*s%s\n", column, names, strings.ReplaceAll(o.help, "\n", "\n"+strings.Repeat(" ", column+2)))
}

// lookupOption is the option called name ("-c", "--settings"), or nil.
func lookupOption(name string) *option {
	for _, o := range srtOptions {
		if name == o.short || name == o.long {
			return o
		}
	}
	return nil
}

// Parse reads the options of c (srt itself or srt run) up to "--" or the
// first word that is not an option: that word and all after it are the
// command, as they are, whatever they look like. A long option's value
// is the next word or follows "="; a short option's, the next word.
// --help and --version end the reading.
//
// It is written by hand, not with kong as srtc's parser is: srt starts
// before every sandboxed command, and a build of srt that parses with
// kong spends about 3 ms more CPU on each start (srt --version: 15 ms
// against 11.5 ms, ratio 1.24 to 1.33; a whole sandboxed srt -c true:
// 1.05), where this parser takes about a microsecond
// (docs/srt.md#why-srt-does-not-use-kong).
func Parse(args []string, c *Command) (*Options, error) {
	o := &Options{Args: args, Debug: os.Getenv("SRT_DEBUG") != "" && os.Getenv("SRT_DEBUG") != "0" && os.Getenv("SRT_DEBUG") != "false"}
	for i := 0; i < len(args); i++ {
		a, start := args[i], i
		if a == "--" {
			o.Argv = args[i+1:]
			return o, nil
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			o.Argv = args[i:]
			return o, nil
		}
		name, v, inline := a, "", false
		if strings.HasPrefix(a, "--") {
			name, v, inline = strings.Cut(a, "=")
		}
		opt := lookupOption(name)
		switch {
		case opt != nil && !opt.takenBy(c) && opt.elsewhere != "":
			return nil, errors.New(opt.elsewhere)
		case opt == nil || !opt.takenBy(c) || inline && opt.value == "":
			return nil, fmt.Errorf("unknown option %s (put the command after --)", a)
		case inline || opt.value == "":
		case strings.HasPrefix(opt.value, "["):
			v = opt.implied
			if i+1 < len(args) && opt.accepts(args[i+1]) {
				i++
				v = args[i]
			}
		case i+1 >= len(args):
			return nil, fmt.Errorf("option %s needs a value", a)
		default:
			i++
			v = args[i]
		}
		if err := opt.set(o, v); err != nil {
			return nil, err
		}
		if opt.short != "-c" {
			o.Options = append(o.Options, args[start:i+1]...)
		}
		if o.Ask != AskRun {
			return o, nil
		}
	}
	return o, nil
}

// HelpAsked reports whether args, a command's arguments, start with -h
// or --help.
func HelpAsked(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "--help")
}

// PrintHelp prints c's help.
func PrintHelp(w io.Writer, c *Command) (int, error) {
	fmt.Fprint(w, c.Help())
	return 0, nil
}

// ParseFD reads a --control-fd value: decimal digits only, at least 3
// (0-2 are the command's standard streams).
func ParseFD(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil || v == "" || v[0] == '+' || v[0] == '-' || n < 3 {
		return 0, fmt.Errorf("--control-fd must be an integer file descriptor >= 3, not %q", v)
	}
	return n, nil
}

// isRefusalsWhen reports whether v is a value of --refusals.
func isRefusalsWhen(v string) bool { return v == "auto" || v == "always" || v == "never" }

// ParseRefusals checks the value of --refusals=WHEN (from, the option as
// written) or of SRT_REFUSALS.
func ParseRefusals(from, v string) (string, error) {
	if isRefusalsWhen(v) {
		return v, nil
	}
	return "", fmt.Errorf("%s must be always, never or auto, not %q", from, v)
}
