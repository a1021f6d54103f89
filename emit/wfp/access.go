package wfp

import (
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"srt.dev/compiler/policy"
)

// Access masks a question asks for (winnt.h).
const (
	// FileGenericRead is FILE_GENERIC_READ: opening a file to read it.
	FileGenericRead Mask = 0x00120089
	// FileGenericWrite is FILE_GENERIC_WRITE: opening a file to change it
	// (creating one asks FILE_ADD_FILE, the same bit as FILE_WRITE_DATA,
	// of its directory, which inherits the same entries).
	FileGenericWrite Mask = 0x00120116
	// writeBits are the bits the write-restricted token checks against
	// its restricting SIDs too (docs/reference.md#windows-token): the
	// write half of the file generic mapping, DELETE, FILE_DELETE_CHILD,
	// WRITE_DAC and WRITE_OWNER. READ_CONTROL and SYNCHRONIZE, which
	// reading needs too, are not (not verified on Windows).
	writeBits Mask = 0x000D0156
	// hostRead is what the host's own ACLs are taken to give everyone,
	// after every entry of the plan: read and execute, nothing writable.
	// The host's real ACLs are a fact of the host (a profile is readable
	// only through the profile read grant; the install's ambient denies
	// cover the stock world-writable directories).
	hostRead Mask = MaskRead
)

// A Bound is an ACL on one host: its paths expanded there, indexed for
// questions.
type Bound struct {
	acl *ACL
	// literal maps a folded path to the entries placed on it; patterns
	// are the entries placed on each match of a pattern (or on the
	// directory holding it).
	literal  map[string][]int
	patterns []boundPattern
}

type boundPattern struct {
	i  int
	ds string // doublestar syntax, case folded
}

// Bind places the program on a host: expand gives a path of the policy
// its form there ("C:/Users/me/x", or "${HOME}/x" while the home
// directory is not known), the form questions are asked in.
func (a *ACL) Bind(expand func(policy.Path) string) *Bound {
	b := &Bound{acl: a, literal: map[string][]int{}}
	for i, x := range a.Entries {
		if x.Place.Path.IsZero() {
			continue // the trust bundle's directory: chosen at run time
		}
		s := expand(x.Place.Path)
		if x.Place.Pattern {
			b.patterns = append(b.patterns, boundPattern{i, policy.Doublestar(strings.ToLower(s))})
			continue
		}
		if q, err := policy.CleanPath(s); err == nil {
			s = q.String()
		}
		b.literal[strings.ToLower(s)] = append(b.literal[strings.ToLower(s)], i)
	}
	return b
}

// A Step is one entry that applies to the path a question asks about.
type Step struct {
	Entry *Entry
	// At is where the entry sits: the path or one of its ancestors.
	At string
	// Level is 0 when the entry sits on the path itself, 1 on its
	// directory, and so on.
	Level int
	// Ranked says what the helper's ranking made of a grant on this
	// host: "" kept, "dropped" (at or under a credential file),
	// "demoted" (a write root at or under a denyWrite: a read grant).
	Ranked string
}

// Applied reports whether the step takes part in the access check.
func (s Step) Applied() bool { return s.Ranked != "dropped" && !s.Entry.Dropped }

// A Decision is an answer of Access.
type Decision struct {
	Allow bool
	// By is the step that decided: the deny that refused, or the grant
	// that completed the access; nil when the host's own ACLs decided.
	By *Step
	// Steps are the entries that apply to the path, nearest first (on
	// one object denies first), grants ranking dropped included.
	Steps []Step
}

// Read answers whether the command may read p.
func (b *Bound) Read(p string) Decision { return b.Access(p, FileGenericRead) }

// Write answers whether the command may change p.
func (b *Bound) Write(p string) Decision { return b.Access(p, FileGenericWrite) }

// Access answers whether the command, under the write-restricted token,
// may open p (a path in the form Bind's expand gives) with want. Windows
// semantics (docs/reference.md#windows-aces, #windows-token):
//
//   - names compare ignoring case; only * and ? make a pattern, and each
//     match of one carries its own entry;
//   - the DACL of p is its own entries, denies first, then the
//     inheritable entries of each ancestor, nearest first, then the
//     host's (read for everyone): the nearest entry decides, and on one
//     object a deny comes before an allow;
//   - a read deny (FILE_ALL_ACCESS) also denies writes;
//   - the helper ranks the grants again on this host's paths: one at or
//     under a credential file is dropped, a write root at or under a
//     write deny is a read grant;
//   - a write bit must be granted twice, to the account and its group,
//     and to the restricting SIDs (sid:user, Everyone and the write
//     roots' sid:cap): only a write root's grant grants it.
//
// Every path is taken to exist when the session starts (a grant is made,
// a pattern's match gets its entry); the DELETE denies on directories a
// placeholder creates are then never written.
func (b *Bound) Access(p string, want Mask) Decision {
	steps := b.steps(p)
	d := Decision{Steps: steps}
	ok, by := check(steps, normalSID, want)
	if ok && want&writeBits != 0 {
		ok, by = check(steps, restrictingSID, want&writeBits)
	}
	d.Allow, d.By = ok, by
	return d
}

func normalSID(t string) bool { return t == sidUser || t == sidGroup }

func restrictingSID(t string) bool { return t == sidUser || strings.HasPrefix(t, "sid:cap(") }

// check is AccessCheck for one pass: the first applied entry of a trustee
// in sids that denies a wanted bit refuses; allows take bits off the
// wanted set; the host's read for everyone comes last.
func check(steps []Step, sids func(string) bool, want Mask) (bool, *Step) {
	for i := range steps {
		s := &steps[i]
		x := s.Entry
		trustee, mask, deny := x.Trustee, x.Mask, x.Deny
		if s.Ranked == "demoted" {
			trustee, mask = sidUser, MaskRead
		}
		if !s.Applied() || !sids(trustee) || mask&want == 0 {
			continue
		}
		if deny {
			return false, s
		}
		want &^= mask
		if want == 0 {
			return true, s
		}
	}
	return want&^hostRead == 0, nil
}

// steps are the entries that apply to p, in DACL order, ranked.
func (b *Bound) steps(p string) []Step {
	var out []Step
	chain := ancestry(p)
	for lv, a := range chain {
		var here []Step
		for _, i := range b.at(chain, lv) {
			x := &b.acl.Entries[i]
			if lv > 0 && !x.Inherit || x.Kind == DenyCreatedDelete {
				continue
			}
			here = append(here, Step{Entry: x, At: a, Level: lv})
		}
		slices.SortStableFunc(here, func(s, t Step) int {
			switch {
			case s.Entry.Deny && !t.Entry.Deny:
				return -1
			case !s.Entry.Deny && t.Entry.Deny:
				return 1
			}
			return 0
		})
		out = append(out, here...)
	}
	rank(out)
	return out
}

// at lists the entries placed on chain[lv], in program order.
func (b *Bound) at(chain []string, lv int) []int {
	key := strings.ToLower(chain[lv])
	out := append([]int(nil), b.literal[key]...)
	for _, pt := range b.patterns {
		x := &b.acl.Entries[pt.i]
		name := key
		if x.Place.Holder {
			if lv == 0 {
				continue
			}
			name = strings.ToLower(chain[lv-1])
		}
		if ok, err := doublestar.Match(pt.ds, name); err == nil && ok {
			out = append(out, pt.i)
		}
	}
	slices.Sort(out)
	return out
}

// rank is the helper's ranking of the grants on the host's paths
// (docs/reference.md#windows-session): a grant at or under a credential
// file is dropped; a write root at or under a write deny becomes a read
// grant.
func rank(steps []Step) {
	for i := range steps {
		s := &steps[i]
		if s.Entry.Deny || s.Entry.Dropped {
			continue
		}
		for _, d := range steps {
			if !d.Entry.Deny || d.Level < s.Level {
				continue
			}
			if d.Entry.Kind == DenyRead && d.Entry.Credential() {
				s.Ranked = "dropped"
				break
			}
			if s.Entry.Kind == WriteGrant && d.Entry.Kind == DenyWrite {
				s.Ranked = "demoted"
			}
		}
	}
}

// ancestry is p and its ancestors, nearest first, as paths in the form
// questions are asked in; "/" last for a path under another root, since
// "/" covers everything (policy.PathRule.Covers). A spelling that is no
// path has none: nothing applies to it.
func ancestry(p string) []string {
	q, err := policy.CleanPath(p)
	if err != nil {
		return nil
	}
	var out []string
	for a, ok := q, true; ok; a, ok = parent(a) {
		out = append(out, a.String())
	}
	if q.Root() != policy.Abs {
		out = append(out, "/")
	}
	return out
}
