//go:build linux

package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/emit/bwrap"
	"srt.dev/internal/untrusted"
	"srt.dev/runtime/resolve"
	"srt.dev/runtime/violations"
	"srt.dev/schema/builtin"
)

// writeExplainer explains the writes the sandbox's mounts refused one
// run: by the mount that decides what the path is in the sandbox, the
// step of the plan it came from, and the setting behind that step. It
// reads the mounts bubblewrap was given, not a second reading of the
// policy.
type writeExplainer struct {
	p          *policy.Policy
	args       []string
	lines      []int
	steps      []bwrap.Step
	home, cwd  string
	settingsIn string // the settings file to edit, in words
	// own are srt's own files and directories on this host (the run's
	// state: policy, programs, registry, quarantine...).
	own []string
}

func newWriteExplainer(p *policy.Policy, res *resolve.Result, steps []bwrap.Step, home, cwd string, state map[policy.StateKind][]string) *writeExplainer {
	in := p.Source
	switch in {
	case "":
		in = "the settings file"
	case builtin.SettingsName:
		in = "~/.srt-settings.json (none exists: the built-in defaults apply)"
	}
	x := &writeExplainer{p: p, args: res.Args, lines: res.Lines, steps: steps, home: home, cwd: cwd, settingsIn: in}
	for _, paths := range state {
		for _, o := range paths {
			if o != "" {
				x.own = append(x.own, filepath.Clean(o))
			}
		}
	}
	return x
}

// explain says why the sandbox refused f and what to change: Short for
// the violation line, Why for the refusal line, Rule for the audit log.
func (x *writeExplainer) explain(f violations.FileRefusal) landlockReason {
	doing := f.Doing()
	m, ok := resolve.MountAt(x.args, x.lines, f.Path)
	var s *bwrap.Step
	if ok && m.Line > 0 {
		for i := range x.steps {
			if x.steps[i].Line == m.Line {
				s = &x.steps[i]
				break
			}
		}
	}
	for _, o := range x.own {
		if below(f.Path, o) {
			return landlockReason{Rule: policy.Mandatory, Short: "srt's own files",
				Why: fmt.Sprintf("srt sandbox refused %s: it is srt's own (%s), which every sandbox keeps read-only whatever the settings say: a command that could change it would change a later run's rules.", doing, o)}
		}
	}
	switch {
	case !ok || m.Dest == "/":
		dir := x.suggest(f.Path, f.Access == "mkdir")
		fix := fmt.Sprintf("add %q to filesystem.allowWrite", dir)
		switch {
		case newNonDir[f.Access] && (containers[dir] || x.expand(dir) == f.Path):
			// No directory narrow enough holds it, and srt makes a missing
			// write root as a directory: naming the file itself would turn
			// it into one.
			return x.newFileReason(f, doing)
		case containers[dir]:
			// Never a whole home or configuration directory: the tool's.
			fix = fmt.Sprintf("add the directory the tool writes below %s to filesystem.allowWrite", dir)
		}
		return landlockReason{Rule: policy.Default, Short: "outside the write roots", Fix: fix,
			Why: fmt.Sprintf("srt sandbox refused %s: no write root covers it. To allow it, %s in %s.", doing, fix, x.settingsIn)}
	case s == nil:
		return landlockReason{Rule: policy.Mandatory, Short: "srt's own files",
			Why: fmt.Sprintf("srt sandbox refused %s: srt keeps it read-only (%s), whatever the settings say.", doing, strings.Join(m.Words, " "))}
	}
	o, reason := stepOrigin(s)
	if o == nil {
		// A step srt adds itself, with its reason.
		why := reason
		return landlockReason{Rule: policy.Mandatory, Short: "kept read-only by srt",
			Why: fmt.Sprintf("srt sandbox refused %s: srt keeps it read-only whatever the settings say (%s).", doing, why)}
	}
	switch {
	case strings.HasPrefix(o.Key, "filesystem.denyWrite"):
		return landlockReason{Rule: *o, Short: "denied by " + o.Key, Fix: "remove " + o.Key,
			Why: fmt.Sprintf("srt sandbox refused %s: %s makes it read-only. To allow it, remove that entry from filesystem.denyWrite in %s.", doing, originText(*o), x.settingsIn)}
	case o.Key == policy.Mandatory.Key:
		return landlockReason{Rule: *o, Short: "protected by srt",
			Why: fmt.Sprintf("srt sandbox refused %s: srt protects it whatever the settings say: a shell's start-up file, git's configuration or hooks, or an editor's or agent's settings would run code on the host later (docs/security.md).", doing)}
	case strings.HasPrefix(o.Key, "credentials."):
		return landlockReason{Rule: *o, Short: "a masked credential",
			Why: fmt.Sprintf("srt sandbox refused %s: %s masks it, and the masked copy is read-only.", doing, originText(*o))}
	}
	return landlockReason{Rule: *o, Short: "read-only by " + o.Key,
		Why: fmt.Sprintf("srt sandbox refused %s: %s makes it read-only (%s).", doing, originText(*o), untrusted.Quote(strings.Join(m.Words, " ")))}
}

// suggest is the directory to add to allowWrite for a refused path p: a
// tool's directory, not the file. Below the home directory, the first
// directory (the second below .cache, .config and .local/share or
// .local/state, which hold one directory per tool), or the file itself
// when it is at the top; in the working directory, the working
// directory; elsewhere, the first two names (a file directly below a
// top-level directory itself).
func (x *writeExplainer) suggest(p string, dir bool) string {
	short := func(base, prefix string) string {
		rel := strings.TrimPrefix(p, base+"/")
		parts := strings.Split(rel, "/")
		n := 1
		switch {
		case parts[0] == ".cache" || parts[0] == ".config":
			n = 2
		case parts[0] == ".local" && len(parts) > 1 && (parts[1] == "share" || parts[1] == "state" || parts[1] == "lib"):
			n = 3
		}
		// A file at the top is named itself: never the whole home.
		last := len(parts) - 1
		if dir {
			last++ // a directory being made is a tool's directory
		}
		n = max(1, min(n, last))
		return prefix + "/" + strings.Join(parts[:n], "/")
	}
	switch {
	case x.cwd != "" && x.cwd != x.home && below(p, x.cwd):
		return "."
	case x.home != "" && below(p, x.home) && p != x.home:
		return short(x.home, "~")
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	n := max(1, min(2, len(parts)-1))
	if len(parts) == 2 {
		n = 2 // /etc/foo: the file, never all of /etc
	}
	// Another user's home: /root/.cache/go-build, not /root/.cache.
	for n < len(parts)-1 && (parts[n-1] == ".cache" || parts[n-1] == ".config" || parts[n-1] == ".local" || n >= 2 && parts[n-2] == ".local") {
		n++
	}
	return "/" + strings.Join(parts[:n], "/")
}

// newNonDir are the accesses that make a new name that is not a
// directory.
var newNonDir = map[string]bool{"create": true, "symlink": true, "link": true, "mknod": true, "rename-to": true}

// newFileReason explains the refusal of f, which makes a new name that
// is not a directory where no directory narrow enough to add holds it. A
// file that exists can be a write root, bound as one, but a missing write
// root is made as a directory, and a file write root can be written,
// never replaced by a link, a special file or a move.
func (x *writeExplainer) newFileReason(f violations.FileRefusal, doing string) landlockReason {
	// The name as the settings file spells it, quoted as srt shows what
	// the command chose: a line break in it must not make a line of srt's.
	name := x.short(f.Path)
	shown := untrusted.Quote(name)
	if f.Access == "create" {
		return landlockReason{Rule: policy.Default, Short: "outside the write roots", Fix: "create " + shown + " first",
			Why: fmt.Sprintf("srt sandbox refused %s: no write root covers it. To allow it, create %s on the host first (srt makes a write root that does not exist a directory), then add %q to filesystem.allowWrite in %s.", doing, shown, name, x.settingsIn)}
	}
	fix := "have the command make it in a directory of its own and add that directory to filesystem.allowWrite"
	return landlockReason{Rule: policy.Default, Short: "outside the write roots", Fix: fix + " " + shown,
		Why: fmt.Sprintf("srt sandbox refused %s: no write root covers it, and none narrower than its directory can allow it (srt makes a write root that does not exist a directory, and a file one cannot be replaced). To allow it, %s in %s, or make %s on the host.", doing, fix, x.settingsIn, shown)}
}

// short is p as a settings file names it: below the home directory,
// "~/…"; elsewhere p.
func (x *writeExplainer) short(p string) string {
	if x.home != "" && x.home != "/" && strings.HasPrefix(p, x.home+"/") {
		return "~" + strings.TrimPrefix(p, x.home)
	}
	return p
}

// expand is the host path of a suggestion of suggest.
func (x *writeExplainer) expand(s string) string {
	switch {
	case s == ".":
		return x.cwd
	case strings.HasPrefix(s, "~/"):
		return x.home + s[1:]
	}
	return s
}

// containers are the directories that hold one directory per tool: a
// refusal there names no directory to add.
var containers = map[string]bool{"~": true, "~/.cache": true, "~/.config": true, "~/.local": true, "~/.local/share": true, "~/.local/state": true, "~/.local/lib": true}

// stepOrigin is the setting behind step s, or srt's reason for a step no
// setting asks for. A plan read from linux/bwrap.args has them in its
// comments ("filesystem.denyWrite[0] s.json:3:5", "mandatory", "srt:
// REASON"), which are shown, never obeyed.
func stepOrigin(s *bwrap.Step) (*policy.Origin, string) {
	if s.Origin != nil || s.Reason != "" {
		return s.Origin, strings.TrimPrefix(s.Reason, "srt: ")
	}
	c := strings.TrimSpace(s.Comment)
	if r, ok := strings.CutPrefix(c, "srt: "); ok || c == "" {
		return nil, r
	}
	key, pos, _ := strings.Cut(c, " ")
	return &policy.Origin{Key: key, Pos: strings.TrimSpace(pos)}, ""
}
