package wfp

import (
	"strings"

	"srt.dev/compiler/policy"
)

// An ACL is the access-control program of a plan: the entries the
// session's grant call writes (the set-ace operations of the sessionStart
// phase are rendered from it, in its order), each with the settings entry
// that made it. Access (access.go) evaluates it the way Windows does, so
// that a review of the plan answers from what the plan writes.
type ACL struct {
	Entries []Entry
}

// Kind is what an Entry is for.
type Kind int

// The kinds of entry (docs/reference.md#windows-aces).
const (
	// ReadGrant is ALLOW MaskRead for sid:user: an allowRead, a write
	// root ranking demoted, or the TLS trust bundle's directory.
	ReadGrant Kind = iota
	// WriteGrant is ALLOW MaskWrite for sid:group or sid:cap(root).
	WriteGrant
	// DenyRead is DENY MaskDenyRead: a denyRead or a credential file.
	DenyRead
	// DenyWrite is DENY MaskDenyWrite: a denyWrite.
	DenyWrite
	// DenyDeleteChild is DENY MaskDeleteChild on a deny target's parent.
	DenyDeleteChild
	// DenyCreatedDelete is DENY MaskDelete, this object only, on a
	// directory a placeholder chain created.
	DenyCreatedDelete
)

// A Place is where an entry goes.
type Place struct {
	// Path is the path, or the pattern each of whose matches gets the
	// entry; the zero Path is the TLS trust bundle's directory, which the
	// runtime chooses.
	Path policy.Path
	// Pattern says that Path is a pattern (only * and ? make one).
	Pattern bool
	// Holder says that the entry goes on the directory holding each match
	// of the pattern.
	Holder bool
}

// String is the place as the plan spells it.
func (p Place) String() string {
	switch {
	case p.Path.IsZero():
		return trustBundleDir
	case p.Pattern && p.Holder:
		return "<the directory holding each match>"
	case p.Pattern:
		return "<each match of " + win(p.Path) + ">"
	}
	return win(p.Path)
}

// An Entry is one access-control entry of the program.
type Entry struct {
	Kind    Kind
	Place   Place
	Trustee string
	Deny    bool
	Mask    Mask
	// Inherit is set for a subtree (OI)(CI) entry, unset for "this object
	// only".
	Inherit bool
	// Rule is the settings entry that made the entry; Also are those
	// that made the same entry again, in order (the plan writes it once,
	// caused by all of them).
	Rule policy.PathRule
	Also []policy.PathRule
	// Dropped says that ranking dropped this grant (it lies at or under a
	// credential file): the plan does not write it, and Access does not
	// apply it, but names it.
	Dropped bool

	Condition, Purpose, Lifetime string
}

// Rules are Rule and Also.
func (x *Entry) Rules() []policy.PathRule { return append([]policy.PathRule{x.Rule}, x.Also...) }

// Causes are the origins of Rules, each once.
func (x *Entry) Causes() Causes {
	var c Causes
	for _, r := range x.Rules() {
		c = append(c, r.Origin)
	}
	return c.dedupe()
}

// Credential reports whether a credentials.files entry made the entry.
func (x *Entry) Credential() bool {
	for _, r := range x.Rules() {
		if strings.HasPrefix(r.Origin.Key, "credentials.") {
			return true
		}
	}
	return false
}

// ace is the entry as the plan writes it.
func (x *Entry) ace() ACE {
	typ, inherit := "ALLOW", inheritSubtree
	if x.Deny {
		typ = "DENY"
	}
	if !x.Inherit {
		inherit = "this object only"
	}
	return ACE{Path: x.Place.String(), Trustee: x.Trustee, Type: typ, Mask: x.Mask, Rights: x.Mask.rightsText(), Inheritance: inherit, Lifetime: x.Lifetime}
}

// NewACL is the access-control program of p's Windows plan. p may come
// from either reading of the settings: from the POSIX reading, what only
// that reading has (the mandatory write denies, the default write paths)
// is left out, only * and ? make a pattern, and a literal entry with * or
// ? names nothing, as in the Windows reading.
func NewACL(p *policy.Policy) *ACL {
	if p.Windows == nil {
		p = windowsRules(p)
	}
	e := &emitter{p: p, w: p.Windows}
	e.rank()
	acl, _ := e.acl()
	return acl
}

// windowsRules is p with its file-system rules read the Windows way.
func windowsRules(p *policy.Policy) *policy.Policy {
	q := *p
	fs := p.Filesystem
	keep := func(l []policy.PathRule) []policy.PathRule {
		var out []policy.PathRule
		for _, r := range l {
			has := strings.ContainsAny(r.Path.String(), "*?")
			if r.Origin == policy.Default || r.Origin == policy.Mandatory || r.Literal && has {
				continue
			}
			r.Pattern = r.Pattern && has
			out = append(out, r)
		}
		return out
	}
	fs.DenyRead, fs.AllowRead, fs.AllowWrite, fs.DenyWrite, fs.CredentialMasks = keep(fs.DenyRead), keep(fs.AllowRead), keep(fs.AllowWrite), keep(fs.DenyWrite), keep(fs.CredentialMasks)
	q.Filesystem = fs
	return &q
}

// aces lists the access-control entries the grant call converges each
// path to (docs/reference.md#windows-aces), grants first, then denies,
// with the placeholders the denies need, as operations.
func (e *emitter) aces() []Operation {
	_, ops := e.acl()
	return ops
}

// acl builds the program and renders it: grants first, then denies; an
// entry already listed gains the causes of a later duplicate instead of
// repeating. The operations are the set-ace operations of the entries the
// plan writes, and the placeholders of the deny targets, in order.
func (e *emitter) acl() (*ACL, []Operation) {
	acl := &ACL{}
	var ops []Operation
	at := map[int]int{} // entry → its operation
	seen := map[string]int{}
	add := func(x Entry) {
		if x.Dropped {
			acl.Entries = append(acl.Entries, x)
			return
		}
		a := x.ace()
		k := strings.ToLower(a.Path) + "|" + a.Trustee + "|" + a.Type + "|" + a.Mask.hex() + "|" + x.Condition
		if i, ok := seen[k]; ok {
			acl.Entries[i].Also = append(acl.Entries[i].Also, x.Rule)
			ops[at[i]].CausedBy = append(ops[at[i]].CausedBy, x.Rule.Origin)
			return
		}
		seen[k] = len(acl.Entries)
		at[len(acl.Entries)] = len(ops)
		acl.Entries = append(acl.Entries, x)
		ops = append(ops, Operation{Op: "set-ace", ACE: &a, Condition: x.Condition, Purpose: x.Purpose, CausedBy: Causes{x.Rule.Origin}})
	}
	for _, r := range e.read {
		add(Entry{Kind: ReadGrant, Place: place(r), Trustee: sidUser, Mask: MaskRead, Inherit: true, Rule: r,
			Condition: grantCondition(r), Purpose: "allowRead: the sandbox account may read and execute here", Lifetime: "released at session reset"})
	}
	if e.p.Network.TLSTerminate {
		add(Entry{Kind: ReadGrant, Trustee: sidUser, Mask: MaskRead, Inherit: true, Rule: policy.PathRule{Origin: e.origin("network.tlsTerminate")},
			Purpose: "network.tlsTerminate: the command must read the trust bundle to trust the proxy's certificates", Lifetime: "released at session reset"})
	}
	for _, r := range e.write {
		pl := place(r)
		for _, t := range []string{sidGroup, capSID(pl.String())} {
			add(Entry{Kind: WriteGrant, Place: pl, Trustee: t, Mask: MaskWrite, Inherit: true, Rule: r,
				Condition: grantCondition(r), Purpose: "allowWrite root: writable by the sandbox, through the token's restricting SID for this root; FILE_DELETE_CHILD is left out so that a deny on a child holds", Lifetime: "kept across sessions, until srt-win acl forget or uninstall"})
		}
	}
	for _, d := range []struct {
		rules   []policy.PathRule
		kind    Kind
		mask    Mask
		purpose string
	}{
		{e.denyRead, DenyRead, MaskDenyRead, "denyRead: no access at all for the sandbox account"},
		{e.denyWrite, DenyWrite, MaskDenyWrite, "denyWrite: no writing, appending, attribute changes or deletion; reading stays possible (SYNCHRONIZE and READ_CONTROL are not denied)"},
	} {
		for _, r := range d.rules {
			if op, ok := placeholder(r); ok {
				ops = append(ops, op)
			}
			for _, x := range e.deny(r, d.kind, d.mask, d.purpose) {
				add(x)
			}
		}
	}
	for _, l := range []struct {
		rules []policy.PathRule
		kind  Kind
		mask  Mask
	}{{e.droppedRead, ReadGrant, MaskRead}, {e.droppedWrite, WriteGrant, MaskWrite}} {
		for _, r := range l.rules {
			add(Entry{Kind: l.kind, Place: place(r), Trustee: sidUser, Mask: l.mask, Inherit: true, Rule: r, Dropped: true})
		}
	}
	return acl, ops
}

// place is where a rule's own entry goes.
func place(r policy.PathRule) Place { return Place{Path: r.Path, Pattern: r.Pattern} }

func grantCondition(r policy.PathRule) string {
	switch {
	case r.Pattern:
		return "on each match found at session start; never on an absent path"
	case isUNC(r.Path):
		return "UNC path: passed through unprobed (probing would send the user's credentials to the server)"
	}
	return "only if the path exists at session start (grants are never made on absent paths)"
}

// placeholder is the operation that creates an absent literal deny target
// at session start; UNC paths and patterns have none.
func placeholder(r policy.PathRule) (Operation, bool) {
	if r.Pattern || isUNC(r.Path) {
		return Operation{}, false
	}
	kind := "file"
	if r.TrailingSeparator {
		kind = "directory (the entry ends in a separator)"
	}
	return Operation{Op: "create-placeholder", Path: win(r.Path), Kind: kind, Condition: "only if absent at session start: each missing component is created (directories, the last one as Kind)",
		Purpose: "a deny needs an object to sit on, so that the path cannot be created later outside the deny", CausedBy: []policy.Origin{r.Origin}}, true
}

// deny lists the entries of one deny target after its placeholder: the
// DELETE denies on the directories the placeholder creates, the target's
// own deny and the FILE_DELETE_CHILD deny on its parent.
func (e *emitter) deny(r policy.PathRule, k Kind, m Mask, purpose string) []Entry {
	life := "released at session reset"
	for _, w := range e.write {
		if !w.Pattern && under(staticPrefix(r), w.Path) {
			life = "kept with the write root " + win(w.Path) + " (until srt-win acl forget or uninstall)"
			break
		}
	}
	var out []Entry
	if !r.Pattern && !isUNC(r.Path) {
		for _, a := range creatable(r.Path) {
			out = append(out, Entry{Kind: DenyCreatedDelete, Place: Place{Path: a}, Trustee: sidUser, Deny: true, Mask: MaskDelete, Rule: r,
				Condition: "only on a directory the placeholder step created", Purpose: "the created directory cannot be deleted to take the placeholder away", Lifetime: life})
		}
	}
	cond := ""
	switch {
	case r.Pattern:
		cond = "on each match found at session start"
	case isUNC(r.Path):
		cond = "UNC path: passed through unprobed, no placeholder"
	}
	out = append(out, Entry{Kind: k, Place: place(r), Trustee: sidUser, Deny: true, Mask: m, Inherit: true, Rule: r, Condition: cond, Purpose: purpose, Lifetime: life})
	holder := Place{Path: r.Path, Pattern: true, Holder: true}
	if !r.Pattern {
		dir, ok := parent(r.Path)
		if !ok {
			return out
		}
		holder = Place{Path: dir}
	}
	return append(out, Entry{Kind: DenyDeleteChild, Place: holder, Trustee: sidUser, Deny: true, Mask: MaskDeleteChild, Inherit: true, Rule: r,
		Condition: cond, Purpose: "the deny target cannot be deleted or renamed away through its parent", Lifetime: life})
}
