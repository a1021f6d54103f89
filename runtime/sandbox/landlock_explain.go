package sandbox

// What a refusal of the second layer means in the policy's words: the
// rule that decided and a line for the person who reads it. Untagged, so
// that it is tested on every system; landlock_audit_linux.go reports
// with it.

import (
	"fmt"
	"path/filepath"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/compiler/policy/netpolicy"
	"srt.dev/runtime/violations"
)

// landlockExplainer explains the second layer's refusals of one run from
// its policy, its home and working directories and the paths the layer
// granted (resolve.Landlock.Write).
type landlockExplainer struct {
	p         *policy.Policy
	home, cwd string
	granted   []string
}

// A landlockReason is the explanation of one refusal.
type landlockReason struct {
	// Rule is the rule that decided: policy.Default when no write root
	// covers the path (nothing is writable unless allowWrite grants it,
	// as srtc explain answers), or the allowWrite entry that names it
	// when the sandbox did not have it as a write root.
	Rule policy.Origin
	// Fix is what to change, when the refusal says it; refusals with the
	// same fix share a refusal line.
	Fix string
	// Short is the few words the violation line ends with.
	Short string
	// Why is the line --refusals prints: what was refused, which rule
	// decided, and what else applies to the path.
	Why string
}

// explain says why the second layer refused d.
func (x *landlockExplainer) explain(d violations.LandlockDenial) landlockReason {
	p := filepath.Clean(d.Path)
	doing := d.Doing()
	for _, g := range x.granted {
		if below(p, g) {
			// Granted, and refused all the same: a rename or link between
			// places of different rights (refer), or a right a file rule
			// cannot hold.
			return landlockReason{Rule: policy.Default, Short: "not allowed by the second layer there",
				Why: fmt.Sprintf(netpolicy.RefusedPrefix+"%s: the second layer (Landlock) does not allow it there (%s).", doing, strings.Join(d.Blockers, ","))}
		}
	}
	fs := &x.p.Filesystem
	if r, _, ok := x.covering(fs.AllowWrite, p); ok {
		return landlockReason{Rule: r.Origin, Short: "not a write root of this sandbox",
			Why: fmt.Sprintf(netpolicy.RefusedPrefix+"%s: %s names it, and this sandbox did not have it as a write root (it did not exist, or was not a directory of its own, when srt started); the second layer (Landlock) refused it.", doing, originText(r.Origin))}
	}
	hidden := ""
	if r, dir, ok := x.covering(fs.DenyRead, p); ok {
		hidden = fmt.Sprintf(", and %s hides %s behind an empty directory", originText(r.Origin), dir)
	}
	return landlockReason{Rule: policy.Default, Short: "outside the write roots",
		Why: fmt.Sprintf(netpolicy.RefusedPrefix+"%s: no write root covers it (filesystem.allowWrite%s and srt's defaults)%s; the second layer (Landlock) refused it.", doing, x.in(), hidden)}
}

// in names the settings file, if the policy came from one.
func (x *landlockExplainer) in() string {
	if x.p.Source == "" {
		return ""
	}
	return " in " + x.p.Source
}

// covering is the last literal rule of l at or above p (the most
// specific, as the compiler orders the defaults first), with its path on
// this host. A rule under a root the run names no directory for covers
// nothing here.
func (x *landlockExplainer) covering(l []policy.PathRule, p string) (r policy.PathRule, dir string, ok bool) {
	for _, rule := range l {
		if rule.Pattern {
			continue
		}
		if d, known := rule.Path.Expand(x.home, x.cwd); known && below(p, filepath.Clean(d)) {
			r, dir, ok = rule, filepath.Clean(d), true
		}
	}
	return r, dir, ok
}

// below reports whether p is dir or lies below it.
func below(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// originText names a rule's place in the settings: its key, and its
// file:line:col when known.
func originText(o policy.Origin) string {
	if o.Pos == "" {
		return o.Key
	}
	return o.Key + " (" + o.Pos + ")"
}
