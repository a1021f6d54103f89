package seatbelt

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// parseProgram reads a profile's text back into a program, with the
// reader of sexpr_test.go, which knows nothing of the emitter. What the
// text does not say (origins, steps, gates, group members, dropped
// spellings) stays unset; comment lines go with the rule after them.
func parseProgram(src string) (*Program, error) {
	forms, err := readProfile(src)
	if err != nil {
		return nil, err
	}
	p := &Program{}
	var comments []string
	last := 0 // offset after the previous form
	take := func(upTo int) {
		for _, l := range strings.Split(src[last:upTo], "\n") {
			if c, ok := strings.CutPrefix(strings.TrimSpace(l), "; "); ok {
				comments = append(comments, c)
			}
		}
	}
	for _, f := range forms {
		take(f.pos)
		last = f.end
		if !isForm(f, "allow") && !isForm(f, "deny") {
			continue
		}
		r := Rule{Action: Deny, Comments: comments}
		comments = nil
		if f.list[0].atom == "allow" {
			r.Action = Allow
		}
		if strings.Contains(src[f.pos:f.end], "\n") {
			r.Form = FormBlock
		}
		i := 1
		for ; i < len(f.list) && !f.list[i].isList; i++ {
			r.Ops = append(r.Ops, f.list[i].atom)
		}
		for ; i < len(f.list); i++ {
			if isForm(f.list[i], "with") {
				r.Tag = true
				continue
			}
			flt, err := parseFilter(src, f.list[i])
			if err != nil {
				return nil, err
			}
			r.Filters = append(r.Filters, flt)
		}
		p.Rules = append(p.Rules, r)
	}
	take(len(src))
	p.Trailing = comments
	return p, nil
}

// parseFilter reads one filter.
func parseFilter(src string, n node) (Filter, error) {
	if !n.isList || len(n.list) == 0 {
		return Filter{}, fmt.Errorf("offset %d: not a filter", n.pos)
	}
	head, args := n.list[0].atom, n.list[1:]
	kinds := map[string]FilterKind{"literal": Literal, "subpath": Subpath, "regex": Regex, "path-regex": PathRegex,
		"global-name": GlobalName, "global-name-prefix": GlobalNamePrefix}
	switch {
	case kinds[head] != 0 || head == "literal":
		s, err := parseStr(args[0])
		return Filter{Kind: kinds[head], Str: s}, err
	case head == "require-all" || head == "require-not":
		f := Filter{Kind: RequireAll}
		if head == "require-not" {
			f.Kind = RequireNot
		}
		for _, a := range args {
			x, err := parseFilter(src, a)
			if err != nil {
				return Filter{}, err
			}
			f.Args = append(f.Args, x)
		}
		return f, nil
	case (head == "local" || head == "remote") && args[0].atom == "unix-socket":
		x, err := parseFilter(src, args[1])
		k := LocalUnix
		if head == "remote" {
			k = RemoteUnix
		}
		return Filter{Kind: k, Args: []Filter{x}}, err
	case (head == "local" || head == "remote") && args[0].atom == "ip":
		s, err := parseStr(args[1])
		k := LocalIP
		if head == "remote" {
			k = RemoteIP
		}
		return Filter{Kind: k, Str: s}, err
	case head == "vnode-type":
		return Filter{Kind: VnodeType, Text: args[0].atom}, nil
	}
	return Filter{Kind: Other, Text: src[n.pos:n.end]}, nil
}

// parseStr reads a string expression.
func parseStr(n node) (Str, error) {
	switch {
	case n.str != nil:
		return Str{{Text: *n.str, Raw: n.raw}}, nil
	case isForm(n, "param") && len(n.list) == 2 && n.list[1].str != nil:
		return Str{{Param: *n.list[1].str}}, nil
	case isForm(n, "string-append"):
		var out Str
		for _, a := range n.list[1:] {
			s, err := parseStr(a)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("offset %d: not a string expression", n.pos)
}

// bare is p without what its text does not say.
func bare(p *Program) *Program {
	out := &Program{Trailing: p.Trailing} // the parameters' decisions are not in the text
	var strip func(fs []Filter) []Filter
	strip = func(fs []Filter) []Filter {
		var out []Filter
		for _, f := range fs {
			out = append(out, Filter{Kind: f.Kind, Str: f.Str, Args: strip(f.Args), Text: f.Text})
		}
		return out
	}
	for _, r := range p.Rules {
		out.Rules = append(out.Rules, Rule{Action: r.Action, Ops: r.Ops, Filters: strip(r.Filters), Form: r.Form, Tag: r.Tag, Comments: r.Comments})
	}
	return out
}

// TestRenderReadsBack: the text of every golden policy's program, read
// back, is the program, and renders to the same text.
func TestRenderReadsBack(t *testing.T) {
	files, err := filepath.Glob("../../golden/testdata/*/settings.json")
	if err != nil || len(files) < 30 {
		t.Fatalf("found %d golden settings files (%v), want at least 30", len(files), err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			continue // a Windows-only case
		}
		prog, err := Compile(p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		text := prog.Render()
		back, err := parseProgram(string(text))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if want := bare(prog); !reflect.DeepEqual(back, want) {
			for i := range min(len(back.Rules), len(want.Rules)) {
				if !reflect.DeepEqual(back.Rules[i], want.Rules[i]) {
					t.Errorf("%s: rule %d reads back as\n%#v\nwant\n%#v", f, i, back.Rules[i], want.Rules[i])
					break
				}
			}
			t.Errorf("%s: the text does not read back as the program (%d rules, want %d)", f, len(back.Rules), len(want.Rules))
		}
		if again := back.Render(); string(again) != string(text) {
			t.Errorf("%s: the program read back renders differently", f)
		}
	}
}

// TestDecide pins Decide's model of Seatbelt on a hand-written profile.
func TestDecide(t *testing.T) {
	profile := `(version 1)
(deny default (with message (param "LOG_TAG")))
(allow file-read*)
(deny file-read*
  (subpath (string-append (param "HOME") "/.ssh"))
  (regex (string-append "^" (param "CWD_REGEX") "/(.*/)?\\.env(/.*)?$"))
  (with message (param "LOG_TAG")))
(allow file-read* (subpath (string-append (param "HOME") "/.ssh/pub")))
(deny file-read* (require-all (subpath (param "HOME")) (require-not (subpath (param "CWD")))))
(allow file-write* (subpath (param "CWD")) (subpath "/tmp") (subpath "/private/tmp"))
(deny file-write-unlink (literal (param "CWD")))
(allow network-outbound (remote unix-socket (subpath "/private/var/run/x.sock")))
(allow network-outbound (remote ip (string-append "localhost:" (param "HTTP_PROXY_PORT"))))
(allow mach-lookup (global-name "com.a") (global-name-prefix "org.b."))
(allow pseudo-tty)
`
	prog, err := parseProgram(profile)
	if err != nil {
		t.Fatal(err)
	}
	params := Params(Host{Home: "/Users/me", Cwd: "/Users/me/p.j", HTTPPort: 4000}.Defines())
	tests := []struct {
		q    Question
		want bool
		rule int // index of the deciding rule
	}{
		{Question{Op: OpReadData, Path: "/private/etc/passwd"}, true, 1},
		{Question{Op: OpReadData, Path: "/Users/me/.ssh/id"}, false, 4},      // the later deny of HOME outside CWD
		{Question{Op: OpReadData, Path: "/Users/me/.sshx"}, false, 4},        // not below .ssh, but below HOME
		{Question{Op: OpReadData, Path: "/Users/me/p.j/a/.env/x"}, false, 2}, // the regex, with its subtree tail
		{Question{Op: OpReadData, Path: "/Users/me/pxj/.env"}, false, 4},     // CWD_REGEX escapes the dot
		{Question{Op: OpReadData, Path: "/Users/me/p.j/src"}, true, 1},       // require-not keeps CWD open
		{Question{Op: OpReadData, Path: "/Users/me/p.j/.envrc"}, true, 1},    // "\\.env(/.*)?$" is not a prefix match
		{Question{Op: OpWriteData, Path: "/Users/me/p.j/f"}, true, 5},        // a write root
		{Question{Op: OpWriteData, Path: "/Users/me/f"}, false, 0},           // (deny default)
		{Question{Op: OpWriteData, Path: "/private/tmp/x"}, true, 5},
		{Question{Op: OpUnlink, Path: "/Users/me/p.j"}, false, 6},  // the literal only
		{Question{Op: OpUnlink, Path: "/Users/me/p.j/f"}, true, 5}, // file-write* covers unlink
		{Question{Op: OpSocketOut, Socket: "/private/var/run/x.sock"}, true, 7},
		{Question{Op: OpSocketOut, Socket: "/private/var/run/y.sock"}, false, 0},
		{Question{Op: OpSocketOut, Addr: "127.0.0.1:4000"}, true, 8},
		{Question{Op: OpSocketOut, Addr: "127.0.0.1:4001"}, false, 0},
		{Question{Op: OpSocketOut, Addr: "1.2.3.4:4000"}, false, 0},
		{Question{Op: "mach-lookup", Name: "com.a"}, true, 9},
		{Question{Op: "mach-lookup", Name: "com.ab"}, false, 0},
		{Question{Op: "mach-lookup", Name: "org.b.x"}, true, 9},
		{Question{Op: "mach-lookup", Name: "org.bx"}, false, 0},
		{Question{Op: "pseudo-tty"}, true, 10},
		{Question{Op: "appleevent-send"}, false, 0},
	}
	for _, tt := range tests {
		v, err := prog.Decide(tt.q, params)
		if err != nil || v.Allow != tt.want || v.Rule != tt.rule {
			t.Errorf("Decide(%+v) = %v (rule %d, %v), want %v (rule %d)", tt.q, v.Allow, v.Rule, err, tt.want, tt.rule)
		}
	}
	if _, err := prog.Decide(Question{Op: OpReadData, Path: "/x"}, nil); err == nil {
		t.Error("an undefined parameter was not an error")
	}
}

// Interp answers questions about a profile's text, read back with
// parseProgram and evaluated with Decide (private_test.go, package
// seatbelt_test, uses it).
type Interp struct{ d *Decider }

// NewInterp reads profile and takes the parameters sandbox-exec would be
// given.
func NewInterp(profile []byte, defines []string) (*Interp, error) {
	p, err := parseProgram(string(profile))
	if err != nil {
		return nil, err
	}
	return &Interp{d: p.Decider(Params(defines))}, nil
}

func (in *Interp) ask(q Question) (bool, int, error) {
	v, err := in.d.Decide(q)
	return v.Allow, v.Rule, err
}

// File answers op on the file at path, resolved as the kernel would.
func (in *Interp) File(op, path string) (bool, int, error) {
	return in.ask(Question{Op: op, Path: policy.MacKernelPath(path)})
}

// Socket answers connecting to the unix socket at path.
func (in *Interp) Socket(path string) (bool, int, error) {
	return in.ask(Question{Op: OpSocketOut, Socket: policy.MacKernelPath(path)})
}

// Outbound answers an outbound connection to "host:port".
func (in *Interp) Outbound(addr string) (bool, int, error) {
	return in.ask(Question{Op: OpSocketOut, Addr: addr})
}

// Bind answers binding a local address "host:port".
func (in *Interp) Bind(addr string) (bool, int, error) {
	return in.ask(Question{Op: "network-bind", Addr: addr})
}

// MachLookup answers looking up the Mach service name.
func (in *Interp) MachLookup(name string) (bool, int, error) {
	return in.ask(Question{Op: "mach-lookup", Name: name})
}

// Op answers an operation without an object.
func (in *Interp) Op(op string) (bool, int, error) { return in.ask(Question{Op: op}) }

// TestFiltersCarryText: every filter on a string in the programs of the
// golden policies carries its text, rendered where the emitter made it
// (withText), and it is the text render gives; a combination carries
// none.
func TestFiltersCarryText(t *testing.T) {
	files, err := filepath.Glob("../../golden/testdata/*/settings.json")
	if err != nil || len(files) < 30 {
		t.Fatalf("found %d golden settings files (%v), want at least 30", len(files), err)
	}
	var check func(name string, f Filter)
	check = func(name string, f Filter) {
		switch f.Kind {
		case RequireAll, RequireNot, LocalUnix, RemoteUnix:
			if f.text != "" {
				t.Errorf("%s: the combination %s keeps its text", name, f)
			}
			for _, a := range f.Args {
				check(name, a)
			}
		default:
			if f.text == "" || f.text != f.render() {
				t.Errorf("%s: %s carries the text %q", name, f.render(), f.text)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, diags, err := compiler.CompileFile("settings.json", data, schema.Options{OS: schema.OSPosix})
		if err != nil || diags != nil {
			continue // a Windows-only case
		}
		prog, err := Compile(p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range prog.Rules {
			for _, x := range r.Filters {
				check(f, x)
			}
		}
	}
}
