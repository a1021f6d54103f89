package wfp_test

// An independent model of what windows/plan.json makes Windows enforce, for
// the agreement test (agree_test.go). It reads the plan as JSON (not the
// emitter's internals), fills in the host facts the runtime would (HOME,
// CWD, what exists at session start), and answers read, write, unix-socket
// and connect questions the way Windows would evaluate the result:
//
//   - File access: the DACL of a path is its explicit ACEs (the plan's
//     set-ace operations on that path, denies before allows,
// docs/reference.md#windows-aces composition rule), then the inheritable ACEs of
//     each ancestor, nearest first, then the host's own ACL (see
//     hostBaseline). AccessCheck walks it in order: an ACE whose trustee is
//     in the token and whose mask meets a still-wanted bit denies (DENY) or
//     grants those bits (ALLOW); bits still wanted at the end are denied.
//   - The token is write-restricted (docs/reference.md#windows-token): a write bit must be
//     granted twice, once to the normal identities and once to the
//     restricting SIDs (sid:user, Everyone, RESTRICTED and sid:cap(r) of
//     each --write-root r). Reads need the first pass only.
//   - Paths compare ignoring case (NTFS names); globs are expanded against
//     the disk at session start, and their matches are ranked by the
//     helper like the other entries (the plan's expand-glob operations say
//     so, and its residual ranking-on-spellings: the helper ranks again on
//     the resolved paths); the model does that ranking too, and fails
//     when it changes a grant that the emitter could have ranked from the
//     spellings alone.
//   - Connects: the plan's WFP filters on ALE_AUTH_CONNECT (interp_wfp_test.go).
//
// What the model cannot know, and fixes by assumption (documented where it
// is used): the host's own ACLs (hostBaseline), which bits Windows counts
// as "write" for a write-restricted token (writeBits), and that connecting
// to an AF_UNIX socket needs write access to its file. Nothing here has run
// on Windows: this checks that the plan and review/query agree, not that
// either matches a real machine.

import (
	"fmt"
	"sort"
	"strings"

	"srt.dev/emit/wfp"
)

// Access masks the model asks for (winnt.h).
const (
	// fileGenericRead is FILE_GENERIC_READ: what opening a file to read it
	// asks for.
	fileGenericRead wfp.Mask = 0x00120089
	// fileGenericWrite is FILE_GENERIC_WRITE: what opening a file to
	// change it asks for (creating one asks FILE_ADD_FILE, the same bit as
	// FILE_WRITE_DATA, of the directory, which inherits the same ACEs).
	fileGenericWrite wfp.Mask = 0x00120116
	// writeBits are the bits a write-restricted token checks against its
	// restricting SIDs too: the write half of the file generic mapping,
	// DELETE, FILE_DELETE_CHILD, WRITE_DAC and WRITE_OWNER. Assumption of
	// the model: READ_CONTROL and SYNCHRONIZE, part of FILE_GENERIC_WRITE
	// but also of FILE_GENERIC_READ, are not.
	writeBits wfp.Mask = 0x000D0156
)

// hostBaseline is the model's stand-in for the host's own ACLs, which come
// after every ACE of the plan: read and execute for everyone, nothing
// writable. review/query makes the same assumption ("readable where the
// host's ACLs let the sandbox account read"; "nothing is writable unless
// allowWrite grants it"). A real profile is readable only through the
// profile grant, and a world-writable directory stays writable under the
// write-restricted token (the install's ambient denies cover the stock
// ones): neither model knows the host.
var hostBaseline = modelACE{trustee: "S-1-1-0", mask: 0x001200A9, inherit: true, kind: "host"}

// host holds the facts the runtime fills in: concrete directories in
// Windows spelling, and the disk at session start.
type host struct {
	Home, Cwd string // C:\Users\me, C:\proj
	// Disk lists every path that exists at session start (their ancestors
	// exist too); glob patterns are expanded against it.
	Disk []string
	// TrustBundleDir is the directory of the TLS trust bundle, which the
	// runtime writes; "" when not needed.
	TrustBundleDir string
}

func (h host) exists(p string) bool {
	k := key(p)
	for _, d := range h.Disk {
		dk := key(d)
		if dk == k || strings.HasPrefix(dk, strings.TrimSuffix(k, `\`)+`\`) {
			return true
		}
	}
	return false
}

// modelACE is one ACE of the model, on a concrete path.
type modelACE struct {
	path    string
	trustee string // a SID ("S-1-1-0") or a plan name ("sid:user", "sid:cap(C:\p)")
	deny    bool
	mask    wfp.Mask
	inherit bool
	// kind is what the plan's entry is: read-grant, write-grant, deny-read,
	// deny-write, delete-child, delete, or host.
	kind       string
	credential bool // caused by credentials.files
	// spelled is the plan's spelling of the path: %USERPROFILE%\x, C:\x,
	// or <each match of …>.
	spelled string
}

// model is a plan with the host facts filled in.
type model struct {
	h host
	// aces maps key(path) to the explicit ACEs the plan converges it to.
	aces map[string][]modelACE
	// normal and restricting are the command token's SIDs.
	normal, restricting map[string]bool
	filters             []wfp.Filter
	// reranked counts the grants the helper's ranking of glob matches
	// and resolved spellings changed (dropped or demoted).
	reranked int
	// unmodelled lists the plan's ACEs the model cannot place.
	unmodelled []string
}

// key is the identity of a path: Windows compares names ignoring case.
func key(p string) string { return strings.ToLower(p) }

// parentOf returns the directory holding p, or "" for a root (C:\ or
// \\server\share).
func parentOf(p string) string {
	if len(p) == 3 && p[1] == ':' {
		return ""
	}
	i := strings.LastIndexByte(p, '\\')
	if i < 0 {
		return ""
	}
	if strings.HasPrefix(p, `\\`) && strings.Count(p, `\`) <= 3 {
		return "" // \\server\share
	}
	if i == 2 && p[1] == ':' {
		return p[:3]
	}
	return p[:i]
}

// atOrUnder reports whether a is b or lies beneath it, ignoring case.
func atOrUnder(a, b string) bool {
	a, b = key(a), key(b)
	return a == b || strings.HasPrefix(a, strings.TrimSuffix(b, `\`)+`\`)
}

// concrete fills in the plan's symbolic roots and cleans the result.
func (h host) concrete(p string) string {
	drive, rest := h.Home[:2], h.Home[2:]
	p = strings.NewReplacer("%USERPROFILE%", h.Home, "%CD%", h.Cwd, "%HOMEDRIVE%", drive, "%HOMEPATH%", rest).Replace(p)
	unc := strings.HasPrefix(p, `\\`)
	var segs []string
	for _, s := range strings.Split(p, `\`) {
		if s != "" {
			segs = append(segs, s)
		}
	}
	out := strings.Join(segs, `\`)
	if unc {
		return `\\` + out
	}
	if len(segs) == 1 && strings.HasSuffix(out, ":") {
		return out + `\`
	}
	return out
}

// matchGlob matches a concrete path against a concrete pattern the way the
// session's glob walk does: segments by \, ** any number of segments, *
// any run within one, ? one character, [..] a class; ignoring case.
func matchGlob(pattern, p string) bool {
	return matchSegs(strings.Split(key(pattern), `\`), strings.Split(key(p), `\`))
}

func matchSegs(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegs(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	return len(segs) > 0 && matchName(pat[0], segs[0]) && matchSegs(pat[1:], segs[1:])
}

func matchName(pat, name string) bool {
	if pat == "" {
		return name == ""
	}
	switch pat[0] {
	case '*':
		for i := 0; i <= len(name); i++ {
			if matchName(pat[1:], name[i:]) {
				return true
			}
		}
		return false
	case '?':
		return name != "" && matchName(pat[1:], name[1:])
	case '[':
		if set, ok := classAt(pat); ok {
			if name == "" || !inClass(set, name[0]) {
				return false
			}
			return matchName(pat[2+len(set):], name[1:])
		}
	}
	return name != "" && pat[0] == name[0] && matchName(pat[1:], name[1:])
}

// classAt returns the set of the class pat starts with, the spec's way
// (docs/reference.md#macos-pitfalls, shared by the glob walk): the set ends
// at the first ], ! and ^ do not negate, and an empty set or a backwards
// range makes the brackets literal text (ok false).
func classAt(pat string) (string, bool) {
	end := strings.IndexByte(pat[1:], ']')
	if end <= 0 {
		return "", false
	}
	set := pat[1 : 1+end]
	for i := 0; i+2 < len(set); i++ {
		if set[i+1] == '-' {
			if set[i] > set[i+2] {
				return "", false
			}
			i += 2
		}
	}
	return set, true
}

func inClass(set string, c byte) bool {
	for i := 0; i < len(set); i++ {
		if i+2 < len(set) && set[i+1] == '-' {
			if set[i] <= c && c <= set[i+2] {
				return true
			}
			i += 2
			continue
		}
		if set[i] == c {
			return true
		}
	}
	return false
}

// matches expands a concrete pattern against the disk.
func (h host) matches(pattern string) []string {
	var out []string
	seen := map[string]bool{}
	for _, d := range h.Disk {
		for a := d; a != ""; a = parentOf(a) {
			if !seen[key(a)] && matchGlob(pattern, a) {
				seen[key(a)] = true
				out = append(out, a)
			}
		}
	}
	sort.Strings(out)
	return out
}

// The set-ace conditions the model knows. A condition it does not know
// fails the test: a new kind of condition needs a decision here.
const (
	condExists     = "only if the path exists at session start (grants are never made on absent paths)"
	condMatchGrant = "on each match found at session start; never on an absent path"
	condMatchDeny  = "on each match found at session start"
	condCreated    = "only on a directory the placeholder step created"
	condUNCGrant   = "UNC path: passed through unprobed (probing would send the user's credentials to the server)"
	condUNCDeny    = "UNC path: passed through unprobed, no placeholder"
)

// interpret builds the model of pl for host h.
func interpret(pl *wfp.Plan, h host) (*model, error) {
	m := &model{h: h, aces: map[string][]modelACE{},
		normal:      map[string]bool{"sid:user": true, "sid:group": true, "S-1-1-0": true, "S-1-5-32-545": true},
		restricting: map[string]bool{}}
	created := map[string]bool{}
	var lastMatches []string
	var raw []modelACE
	for _, ph := range pl.Phases {
		for _, op := range ph.Operations {
			switch {
			case ph.Name == "install" && op.Op == "wfp-add-filter":
				m.filters = append(m.filters, *op.Filter)
			case ph.Name == "sessionStart" && op.Op == "create-placeholder":
				p := h.concrete(op.Path)
				for a := p; a != "" && !h.exists(a); a = parentOf(a) {
					created[key(a)] = true
				}
			case ph.Name == "sessionStart" && op.Op == "set-ace":
				a := op.ACE
				credential := false
				for _, c := range op.CausedBy {
					credential = credential || strings.HasPrefix(c.Key, "credentials.")
				}
				var paths []string
				switch {
				case strings.HasPrefix(a.Path, "<each match of "):
					lastMatches = h.matches(h.concrete(strings.TrimSuffix(strings.TrimPrefix(a.Path, "<each match of "), ">")))
					paths = lastMatches
				case a.Path == "<the directory holding each match>":
					seen := map[string]bool{}
					for _, x := range lastMatches {
						if d := parentOf(x); d != "" && !seen[key(d)] {
							seen[key(d)] = true
							paths = append(paths, d)
						}
					}
				case a.Path == "<directory of the TLS trust bundle>":
					if h.TrustBundleDir == "" {
						m.unmodelled = append(m.unmodelled, a.Path)
						continue
					}
					paths = []string{h.TrustBundleDir}
				case strings.HasPrefix(a.Path, "<"):
					return nil, fmt.Errorf("set-ace on %q: a run-time path the model does not know", a.Path)
				default:
					paths = []string{h.concrete(a.Path)}
				}
				var keep []string
				for _, p := range paths {
					ok := false
					switch op.Condition {
					case "", condMatchDeny, condUNCGrant, condUNCDeny:
						ok = true
					case condExists, condMatchGrant:
						ok = h.exists(p)
					case condCreated:
						ok = created[key(p)]
					default:
						return nil, fmt.Errorf("set-ace on %s: condition %q is not in the model", a.Path, op.Condition)
					}
					if ok {
						keep = append(keep, p)
					}
				}
				for _, p := range keep {
					x, err := m.ace(p, *a, credential)
					if err != nil {
						return nil, err
					}
					raw = append(raw, x)
				}
			case ph.Name == "perCommand" && op.Op == "exec":
				for _, s := range op.Exec.Token.RestrictingSID {
					if !strings.HasPrefix(s, "sid:cap(") {
						m.restricting[strings.Fields(s)[0]] = true
					}
				}
			}
		}
	}
	raw, err := m.rank(raw)
	if err != nil {
		return nil, err
	}
	for _, a := range raw {
		if a.kind == "write-grant" && strings.HasPrefix(a.trustee, "sid:cap(") {
			// The command's token carries sid:cap(r) of each granted root
			// (--write-root r; docs/reference.md#windows-exec: the session's granted roots).
			m.restricting[a.trustee] = true
		}
		m.aces[key(a.path)] = append(m.aces[key(a.path)], a)
	}
	for k, l := range m.aces {
		// The composition rule (docs/reference.md#windows-aces): denies first, then allows.
		sort.SliceStable(l, func(i, j int) bool { return l[i].deny && !l[j].deny })
		m.aces[k] = l
	}
	return m, nil
}

// ace turns one of the plan's ACEs into the model's, on concrete path p.
func (m *model) ace(p string, a wfp.ACE, credential bool) (modelACE, error) {
	x := modelACE{path: p, trustee: a.Trustee, deny: a.Type == "DENY", mask: a.Mask, credential: credential, spelled: a.Path}
	switch a.Inheritance {
	case "subtree (OI)(CI)":
		x.inherit = true
	case "this object only":
	default:
		return x, fmt.Errorf("ACE on %s: inheritance %q is not in the model", a.Path, a.Inheritance)
	}
	if strings.HasPrefix(x.trustee, "sid:cap(") {
		x.trustee = "sid:cap(" + key(p) + ")"
	}
	switch {
	case !x.deny && a.Mask == wfp.MaskRead:
		x.kind = "read-grant"
	case !x.deny && a.Mask == wfp.MaskWrite:
		x.kind = "write-grant"
	case x.deny && a.Mask == wfp.MaskDenyRead:
		x.kind = "deny-read"
	case x.deny && a.Mask == wfp.MaskDenyWrite:
		x.kind = "deny-write"
	case x.deny && a.Mask == wfp.MaskDeleteChild:
		x.kind = "delete-child"
	case x.deny && a.Mask == wfp.MaskDelete:
		x.kind = "delete"
	default:
		return x, fmt.Errorf("ACE on %s: %s %s is not in the ACE catalogue", a.Path, a.Type, a.Mask.Rights())
	}
	return x, nil
}

// rank is the helper's ranking on resolved paths (docs/reference.md#windows-session), which
// the plan's expand-glob operations apply to every match: a grant at or
// under a credential deny is dropped, a write grant at or under a write
// deny becomes a read grant. The emitter ranks the spellings already; what
// may change here is only what the host decides: a glob match, or two
// spellings with different roots (%USERPROFILE%\x and C:\Users\me\x).
// A change between two spellings of the same root is a ranking the
// emitter missed, and an error.
func (m *model) rank(raw []modelACE) ([]modelACE, error) {
	var out []modelACE
	demoted := map[string]bool{}
	for _, a := range raw {
		if a.kind != "read-grant" && a.kind != "write-grant" {
			out = append(out, a)
			continue
		}
		var by *modelACE
		demote := false
		for i, d := range raw {
			if d.kind == "deny-read" && d.credential && atOrUnder(a.path, d.path) {
				by, demote = &raw[i], false
				break
			}
			if a.kind == "write-grant" && d.kind == "deny-write" && atOrUnder(a.path, d.path) && by == nil {
				by, demote = &raw[i], true
			}
		}
		if by == nil {
			out = append(out, a)
			continue
		}
		if root(a.spelled) == root(by.spelled) && root(a.spelled) != "<match>" {
			return nil, fmt.Errorf("the plan grants %s on %s although %s lies at or above it: the emitter's ranking should have dropped or demoted it", a.kind, a.spelled, by)
		}
		m.reranked++
		if demote && !demoted[key(a.path)] {
			demoted[key(a.path)] = true
			out = append(out, modelACE{path: a.path, trustee: "sid:user", mask: wfp.MaskRead, inherit: true, kind: "read-grant", spelled: a.spelled})
		}
	}
	return out, nil
}

// root is the root of a plan spelling as the emitter's ranking sees it: a
// %VAR%, a drive, a UNC server, or "<match>" for a glob match, which only
// the host can rank.
func root(spelled string) string {
	switch {
	case strings.HasPrefix(spelled, "<"):
		return "<match>"
	case strings.HasPrefix(spelled, "%"):
		return strings.ToUpper(spelled[:strings.IndexByte(spelled[1:], '%')+2])
	case strings.HasPrefix(spelled, `\`):
		return "UNC"
	}
	return strings.ToUpper(spelled[:2])
}

// dacl is the DACL of p in evaluation order: p's explicit ACEs, then the
// inheritable ACEs of each ancestor, nearest first, then the host's.
func (m *model) dacl(p string) []modelACE {
	out := append([]modelACE{}, m.aces[key(p)]...)
	for a := parentOf(p); a != ""; a = parentOf(a) {
		for _, x := range m.aces[key(a)] {
			if x.inherit {
				out = append(out, x)
			}
		}
	}
	return append(out, hostBaseline)
}

// check is AccessCheck for one pass: the first ACE of a trustee in sids
// that denies a wanted bit fails it; allows take bits off the wanted set.
// It returns the deciding ACE (nil: what nothing granted).
func check(dacl []modelACE, sids map[string]bool, want wfp.Mask) (bool, *modelACE) {
	for i := range dacl {
		a := &dacl[i]
		if !sids[a.trustee] || a.mask&want == 0 {
			continue
		}
		if a.deny {
			return false, a
		}
		want &^= a.mask
		if want == 0 {
			return true, a
		}
	}
	return false, nil
}

// access answers whether the command may open p with want, and the ACE
// that decided.
func (m *model) access(p string, want wfp.Mask) (bool, *modelACE) {
	d := m.dacl(p)
	ok, by := check(d, m.normal, want)
	if !ok {
		return false, by
	}
	if w := want & writeBits; w != 0 {
		return check(d, m.restricting, w)
	}
	return true, by
}

// Read answers whether the command may read p (concrete, Windows spelling).
func (m *model) Read(p string) (bool, *modelACE) { return m.access(p, fileGenericRead) }

// Write answers whether the command may change p.
func (m *model) Write(p string) (bool, *modelACE) { return m.access(p, fileGenericWrite) }

// Delete answers whether the command may remove p: Windows allows it with
// DELETE on p, or FILE_DELETE_CHILD on its directory.
func (m *model) Delete(p string) (bool, *modelACE) {
	ok, by := m.access(p, wfp.MaskDelete)
	if ok {
		return true, by
	}
	if d := parentOf(p); d != "" {
		if ok, by2 := m.access(d, wfp.MaskDeleteChild); ok {
			return true, by2
		}
	}
	return false, by
}

// UnixSocket answers whether the command may connect to the AF_UNIX socket
// at p. The plan does not filter AF_UNIX; connecting needs write access
// to the socket file (Windows' AF_UNIX rule; an assumption of the model).
func (m *model) UnixSocket(p string) (bool, *modelACE) { return m.Write(p) }

// String describes an ACE for a failure message.
func (a *modelACE) String() string {
	if a == nil {
		return "nothing granted it"
	}
	t := "ALLOW"
	if a.deny {
		t = "DENY"
	}
	m, _ := a.mask.MarshalJSON()
	return fmt.Sprintf("%s %s %s on %s (%s)", t, a.trustee, m, a.path, a.kind)
}
