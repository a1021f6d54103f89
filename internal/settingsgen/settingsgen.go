// Package settingsgen writes realistic settings files of a chosen size,
// the same bytes for the same seed and sizes, for the growth benchmarks of
// srtc (docs/performance.md, "review tools: growth") and the differential
// tests of the review tools' indexes.
//
// A file looks like a large organisation's generated policy: exact and
// wildcard hosts (some with ports, a few IP literals), hosts denied under
// allowed wildcards, read denies under ~ and . (directories, globs,
// literal entries) with allowRead carve-outs inside them, write roots with
// write denies inside them, masked and removed credentials whose inject
// hosts the allow list covers, and every other list a user can make long.
// Every file it writes is valid for the POSIX path rules.
package settingsgen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
)

// Sizes are the number of entries of each list.
type Sizes struct {
	AllowedDomains          int // network.allowedDomains
	DeniedDomains           int // network.deniedDomains (a tenth with a deniedDomainReasons entry)
	DenyRead                int // filesystem.denyRead: globs and literals under ~, . and /
	AllowRead               int // filesystem.allowRead: carve-outs inside the read denies
	AllowWrite              int // filesystem.allowWrite ("." first)
	DenyWrite               int // filesystem.denyWrite, inside the write roots
	AllowUnixSockets        int // network.allowUnixSockets
	DeniedResolvedAddresses int // network.deniedResolvedAddresses
	AllowMachLookup         int // network.allowMachLookup
	ExcludeDomains          int // network.tlsTerminate.excludeDomains
	ExtraCACertPaths        int // network.tlsTerminate.extraCaCertPaths
	MitmDomains             int // network.mitmProxy.domains
	StripResponseHeaders    int // network.stripResponseHeaders
	EnvVars                 int // credentials.envVars (every third masked)
	InjectHosts             int // injectHosts of each masked credential that has them
	CredentialFiles         int // credentials.files (every third masked)
	AwsPairs                int // credentials.awsPairs (each adds two masked variables)
	IgnoreViolations        int // patterns under ignoreViolations, over a few commands
	SafeDirectories         int // git.safeDirectories
	// Assertions is the number of lines of the policy test file
	// (GenerateTests); Generate ignores it.
	Assertions int
}

// A List names one list of Sizes, for tools that grow one at a time.
type List struct {
	Name string // the settings key, e.g. "network.allowedDomains"
	Of   func(*Sizes) *int
}

// Lists are every list of Sizes.
var Lists = []List{
	{"network.allowedDomains", func(s *Sizes) *int { return &s.AllowedDomains }},
	{"network.deniedDomains", func(s *Sizes) *int { return &s.DeniedDomains }},
	{"filesystem.denyRead", func(s *Sizes) *int { return &s.DenyRead }},
	{"filesystem.allowRead", func(s *Sizes) *int { return &s.AllowRead }},
	{"filesystem.allowWrite", func(s *Sizes) *int { return &s.AllowWrite }},
	{"filesystem.denyWrite", func(s *Sizes) *int { return &s.DenyWrite }},
	{"network.allowUnixSockets", func(s *Sizes) *int { return &s.AllowUnixSockets }},
	{"network.deniedResolvedAddresses", func(s *Sizes) *int { return &s.DeniedResolvedAddresses }},
	{"network.allowMachLookup", func(s *Sizes) *int { return &s.AllowMachLookup }},
	{"network.tlsTerminate.excludeDomains", func(s *Sizes) *int { return &s.ExcludeDomains }},
	{"network.tlsTerminate.extraCaCertPaths", func(s *Sizes) *int { return &s.ExtraCACertPaths }},
	{"network.mitmProxy.domains", func(s *Sizes) *int { return &s.MitmDomains }},
	{"network.stripResponseHeaders", func(s *Sizes) *int { return &s.StripResponseHeaders }},
	{"credentials.envVars", func(s *Sizes) *int { return &s.EnvVars }},
	{"credentials.*.injectHosts", func(s *Sizes) *int { return &s.InjectHosts }},
	{"credentials.files", func(s *Sizes) *int { return &s.CredentialFiles }},
	{"credentials.awsPairs", func(s *Sizes) *int { return &s.AwsPairs }},
	{"ignoreViolations", func(s *Sizes) *int { return &s.IgnoreViolations }},
	{"git.safeDirectories", func(s *Sizes) *int { return &s.SafeDirectories }},
	{"test assertions", func(s *Sizes) *int { return &s.Assertions }},
}

// Scale is the usual shape of a policy with n allowed domains: a quarter
// as many read denies and denied domains, an eighth as many allowRead,
// allowWrite and denyWrite entries, a few of every other list (n/64), and
// fewer credentials (n/256; every third masked).
func Scale(n int) Sizes {
	few, creds := max(n/64, 1), max(n/256, 1)
	return Sizes{
		AllowedDomains: n, DeniedDomains: n / 4,
		DenyRead: n / 4, AllowRead: n / 8, AllowWrite: n / 8, DenyWrite: n / 8,
		AllowUnixSockets: few, DeniedResolvedAddresses: few, AllowMachLookup: few,
		ExcludeDomains: few, ExtraCACertPaths: few, MitmDomains: few, StripResponseHeaders: few,
		EnvVars: creds, InjectHosts: creds, CredentialFiles: creds, AwsPairs: max(creds/4, 1),
		IgnoreViolations: few, SafeDirectories: few,
		Assertions: n / 4,
	}
}

// Times returns s with every list multiplied by k.
func (s Sizes) Times(k int) Sizes {
	for _, l := range Lists {
		*l.Of(&s) *= k
	}
	return s
}

// Generate writes the settings file of sizes s for seed: indented JSON,
// the same bytes for the same arguments.
func Generate(seed uint64, s Sizes) []byte {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), s: s}
	data, err := json.MarshalIndent(g.document(), "", "  ")
	if err != nil {
		panic(err) // maps and slices of strings always marshal
	}
	return append(data, '\n')
}

// Fit returns the largest n whose file of shape(n) is at most maxBytes,
// and that file; n is 0 and the file nil when even shape(1) is larger.
// With Scale as the shape, it writes the largest realistic file a size
// allows (4 MiB, the limit of a settings file).
func Fit(seed uint64, shape func(n int) Sizes, maxBytes int) (int, []byte) {
	lo, hi := 0, 1
	var best []byte
	for {
		data := Generate(seed, shape(hi))
		if len(data) > maxBytes {
			break
		}
		lo, best, hi = hi, data, hi*2
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if data := Generate(seed, shape(mid)); len(data) <= maxBytes {
			lo, best = mid, data
		} else {
			hi = mid
		}
	}
	return lo, best
}

type gen struct {
	r *rand.Rand
	s Sizes
	// hosts are the allowed entries' hosts that an injectHosts entry may
	// name (covered by allowedDomains), filled by allowed.
	hosts []string
}

func (g *gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// percent is true p times in a hundred.
func (g *gen) percent(p int) bool { return g.r.IntN(100) < p }

var (
	subdomains = []string{"api", "cdn", "www", "registry", "auth", "static", "files", "git", "pkg", "uploads", "objects", "login"}
	tlds       = []string{"com", "net", "io", "dev", "org", "cloud"}
)

// org is one of the organisations the hosts belong to: n entries share
// about n/4 of them, so wildcards cover exact entries and denies fall
// under allows.
func (g *gen) org(n int) string {
	i := g.r.IntN(max(n/4, 1))
	return fmt.Sprintf("org%d.%s", i, tlds[i%len(tlds)])
}

func (g *gen) document() map[string]any {
	s := g.s
	network := map[string]any{
		"allowedDomains": g.allowed(),
		"deniedDomains":  []string{},
	}
	denied, reasons := g.denied()
	network["deniedDomains"] = denied
	if len(reasons) > 0 {
		network["deniedDomainReasons"] = reasons
	}
	if s.AllowUnixSockets > 0 {
		network["allowUnixSockets"] = g.list(s.AllowUnixSockets, func(i int) any {
			return g.pick(fmt.Sprintf("/run/user/1000/app%d.sock", i), fmt.Sprintf("~/.app%d/agent.sock", i), fmt.Sprintf("/var/run/svc%d/api.sock", i))
		})
	}
	if s.DeniedResolvedAddresses > 0 {
		network["deniedResolvedAddresses"] = g.list(s.DeniedResolvedAddresses, func(i int) any {
			if i%4 == 3 {
				return fmt.Sprintf("fd%02x:%x::/32", i%256, i/256%65536)
			}
			return fmt.Sprintf("10.%d.%d.0/24", i/256%256, i%256)
		})
	}
	if s.AllowMachLookup > 0 {
		network["allowMachLookup"] = g.list(s.AllowMachLookup, func(i int) any {
			if i%5 == 4 {
				return fmt.Sprintf("com.example%d.*", i)
			}
			return fmt.Sprintf("com.example.service%d", i)
		})
	}
	if s.StripResponseHeaders > 0 {
		network["stripResponseHeaders"] = g.list(s.StripResponseHeaders, func(i int) any { return fmt.Sprintf("X-Internal-%d", i) })
	}
	if s.MitmDomains > 0 {
		network["mitmProxy"] = map[string]any{
			"socketPath": "/tmp/mitm.sock",
			"domains":    g.list(s.MitmDomains, func(i int) any { return fmt.Sprintf("inspect%d.example.com", i) }),
		}
	}
	creds := g.credentials()
	if creds != nil || s.ExcludeDomains > 0 || s.ExtraCACertPaths > 0 {
		tls := map[string]any{}
		if s.ExcludeDomains > 0 {
			tls["excludeDomains"] = g.list(s.ExcludeDomains, func(i int) any {
				if i%3 == 2 {
					return fmt.Sprintf("*.pinned%d.example.net", i)
				}
				return fmt.Sprintf("pinned%d.example.net", i)
			})
		}
		if s.ExtraCACertPaths > 0 {
			tls["extraCaCertPaths"] = g.list(s.ExtraCACertPaths, func(i int) any { return fmt.Sprintf("/etc/ssl/extra/ca%d.pem", i) })
		}
		network["tlsTerminate"] = tls
	}
	doc := map[string]any{
		"network":    network,
		"filesystem": g.filesystem(),
	}
	if creds != nil {
		doc["credentials"] = creds
	}
	if s.IgnoreViolations > 0 {
		iv := map[string][]string{}
		cmds := []string{"*", "npm", "git", "make", "cargo"}
		for i := range s.IgnoreViolations {
			c := cmds[i%len(cmds)]
			iv[c] = append(iv[c], fmt.Sprintf("/tmp/cache%d/*", i))
		}
		doc["ignoreViolations"] = iv
	}
	if s.SafeDirectories > 0 {
		doc["git"] = map[string]any{"safeDirectories": g.list(s.SafeDirectories, func(i int) any { return fmt.Sprintf("/work/repo%d", i) })}
	}
	return doc
}

func (g *gen) list(n int, f func(i int) any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// allowed writes allowedDomains: mostly exact hosts, a quarter wildcards,
// some ports, a few IP literals and localhost.
func (g *gen) allowed() []string {
	n := g.s.AllowedDomains
	out := make([]string, 0, n)
	for i := range n {
		var e string
		switch k := g.r.IntN(100); {
		case i == 0:
			e = "localhost:3000"
		case k < 2:
			e = fmt.Sprintf("10.%d.%d.%d", g.r.IntN(256), g.r.IntN(256), 1+g.r.IntN(254))
		case k < 3:
			e = fmt.Sprintf("[2001:db8::%x]:443", i)
		case k < 28:
			o := g.org(n)
			e = "*." + o
			g.hosts = append(g.hosts, "svc."+o)
		default:
			h := g.pick(subdomains...) + "." + g.org(n)
			if g.percent(30) {
				h = fmt.Sprintf("%s%d.%s", g.pick(subdomains...), i, g.org(n))
			}
			g.hosts = append(g.hosts, h)
			e = h
		}
		if g.percent(10) && !isBracketed(e) && e != "localhost:3000" {
			e += g.pick(":443", ":8443", ":22")
		}
		out = append(out, e)
	}
	return out
}

func isBracketed(e string) bool { return len(e) > 0 && e[0] == '[' }

// denied writes deniedDomains: hosts under allowed organisations,
// trackers' wildcards and metadata addresses, with a reason for a tenth.
func (g *gen) denied() ([]string, map[string]string) {
	n := g.s.DeniedDomains
	out := make([]string, 0, n)
	reasons := map[string]string{}
	for i := range n {
		var e string
		switch k := g.r.IntN(100); {
		case i == 0:
			e = "169.254.169.254"
		case i == 1:
			e = "metadata.google.internal"
		case k < 40:
			e = fmt.Sprintf("internal%d.%s", i, g.org(g.s.AllowedDomains))
		case k < 70:
			e = fmt.Sprintf("*.ads%d.example.com", i)
		case k < 80:
			e = fmt.Sprintf("tracker%d.example.net:443", i)
		default:
			e = fmt.Sprintf("%s.%s", g.pick("debug", "admin", "staging"), g.org(g.s.AllowedDomains))
		}
		out = append(out, e)
		if i%10 == 0 {
			reasons[e] = fmt.Sprintf("policy %d: not for sandboxed commands", i)
		}
	}
	return out, reasons
}

// A pathEntry is a filesystem entry and where allowRead may carve inside
// it.
type pathEntry struct {
	value  any    // a string, or a literal object
	inside string // a spelling strictly inside it ("" for none)
}

func literal(p string) any { return map[string]any{"path": p, "literal": true} }

// denyRead writes read denies: credential directories under ~, secrets
// under ., globs of key files at any depth below a directory, system
// paths, and a few literal entries.
func (g *gen) denyRead(i int) pathEntry {
	switch k := g.r.IntN(100); {
	case k < 25:
		d := fmt.Sprintf("~/.config/app%d", i)
		return pathEntry{d, d + "/public"}
	case k < 40:
		d := fmt.Sprintf("./secrets/s%d", i)
		return pathEntry{d, d + "/README.md"}
	case k < 55:
		d := fmt.Sprintf("./src/m%d", i)
		return pathEntry{d + "/**/.env*", d + "/.env.example"}
	case k < 65:
		d := fmt.Sprintf("~/.local/share/app%d/keys", i)
		return pathEntry{d + "/*.pem", d + "/ca.pem"}
	case k < 72:
		return pathEntry{fmt.Sprintf("**/*.key%d", i), fmt.Sprintf("./test/fixture.key%d", i)}
	case k < 80:
		d := fmt.Sprintf("/etc/app%d/private", i)
		return pathEntry{d, d + "/banner.txt"}
	case k < 85:
		return pathEntry{fmt.Sprintf("~/projects/p%d/**/id_rsa*", i), ""}
	case k < 88:
		return pathEntry{literal(fmt.Sprintf("~/data/[%d] archive", i)), ""}
	case k < 94:
		d := fmt.Sprintf("./data/d%d", i)
		return pathEntry{d + "/*/cache", d + "/x/cache/keep"}
	default:
		d := fmt.Sprintf("~/.%s%d", g.pick("aws", "kube", "docker", "gnupg", "ssh"), i)
		return pathEntry{d, d + "/config"}
	}
}

// writeRoot writes a write root and a spelling inside it for a deny.
func (g *gen) writeRoot(i int) pathEntry {
	if i == 0 {
		return pathEntry{".", "./.github/workflows"}
	}
	switch k := g.r.IntN(100); {
	case k < 40:
		d := fmt.Sprintf("./build/b%d", i)
		return pathEntry{d, d + "/release"}
	case k < 60:
		d := fmt.Sprintf("~/.cache/tool%d", i)
		return pathEntry{d, d + "/config.json"}
	case k < 75:
		d := fmt.Sprintf("/tmp/work%d", i)
		return pathEntry{d, d + "/lock"}
	case k < 85:
		d := fmt.Sprintf("./out/o%d", i)
		return pathEntry{d + "/**", d + "/**/*.lock"}
	case k < 90:
		d := fmt.Sprintf("./gen/g%d", i)
		return pathEntry{d + "/*", d + "/x/keep"}
	default:
		d := fmt.Sprintf("~/go/pkg/mod/cache%d", i)
		return pathEntry{d, d + "/lock"}
	}
}

func (g *gen) filesystem() map[string]any {
	s := g.s
	var denyRead, allowRead, allowWrite, denyWrite []any
	var carve []string
	for i := range s.DenyRead {
		e := g.denyRead(i)
		denyRead = append(denyRead, e.value)
		if e.inside != "" {
			carve = append(carve, e.inside)
		}
	}
	for i := range s.AllowRead {
		if len(carve) == 0 {
			allowRead = append(allowRead, fmt.Sprintf("./docs/d%d", i))
			continue
		}
		allowRead = append(allowRead, carve[g.r.IntN(len(carve))])
	}
	var inside []string
	for i := range s.AllowWrite {
		e := g.writeRoot(i)
		allowWrite = append(allowWrite, e.value)
		inside = append(inside, e.inside)
	}
	for i := range s.DenyWrite {
		if len(inside) == 0 || g.percent(10) {
			denyWrite = append(denyWrite, fmt.Sprintf("./deploy/env%d", i))
			continue
		}
		denyWrite = append(denyWrite, inside[g.r.IntN(len(inside))])
	}
	out := map[string]any{
		"denyRead":   nonNil(denyRead),
		"allowWrite": nonNil(allowWrite),
		"denyWrite":  nonNil(denyWrite),
	}
	if allowRead != nil {
		out["allowRead"] = allowRead
	}
	return out
}

func nonNil(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// credentials writes credentials.envVars, files and awsPairs, or nil
// when there are none. Every third credential is masked; half the masked
// ones name inject hosts from the allow list.
func (g *gen) credentials() map[string]any {
	s := g.s
	if s.EnvVars+s.CredentialFiles+s.AwsPairs == 0 {
		return nil
	}
	opts := func(i int, m map[string]any) map[string]any {
		if i%3 != 2 {
			m["mode"] = "deny"
			return m
		}
		m["mode"] = "mask"
		if i%2 == 0 && s.InjectHosts > 0 && len(g.hosts) > 0 {
			hosts := make([]string, 0, s.InjectHosts)
			for range s.InjectHosts {
				hosts = append(hosts, g.hosts[g.r.IntN(len(g.hosts))])
			}
			m["injectHosts"] = hosts
		}
		if i%5 == 0 {
			m["extract"] = "token=([A-Za-z0-9]+)"
		}
		return m
	}
	out := map[string]any{}
	var envVars []any
	for i := range s.EnvVars {
		envVars = append(envVars, opts(i, map[string]any{"name": fmt.Sprintf("SERVICE_TOKEN_%d", i)}))
	}
	var pairs []any
	for i := range s.AwsPairs {
		id, secret := fmt.Sprintf("AWS_KEY_ID_%d", i), fmt.Sprintf("AWS_SECRET_%d", i)
		envVars = append(envVars, map[string]any{"name": id, "mode": "mask"}, map[string]any{"name": secret, "mode": "mask"})
		pairs = append(pairs, map[string]any{"accessKeyIdVar": id, "secretAccessKeyVar": secret})
	}
	if envVars != nil {
		out["envVars"] = envVars
	}
	if pairs != nil {
		out["awsPairs"] = pairs
	}
	if s.CredentialFiles > 0 {
		var files []any
		for i := range s.CredentialFiles {
			files = append(files, opts(i, map[string]any{"path": fmt.Sprintf("~/.creds/%s%d.json", g.pick("gcp", "azure", "npm", "pypi"), i)}))
		}
		out["files"] = files
	}
	return out
}

// Names are the list names of Lists, in order.
func Names() []string {
	var out []string
	for _, l := range Lists {
		out = append(out, l.Name)
	}
	return out
}

// Lookup returns the list called name.
func Lookup(name string) (List, bool) {
	i := slices.IndexFunc(Lists, func(l List) bool { return l.Name == name })
	if i < 0 {
		return List{}, false
	}
	return Lists[i], true
}

// GenerateTests writes a policy test file (.srt-settings.test, see
// review/policytest) of s.Assertions lines for the settings of seed and
// s: reads and writes of paths the rules name and of paths inside them,
// connects to the hosts, and a few unix sockets, some limited to targets.
// The verdicts are guesses: a run reports which hold.
func GenerateTests(seed uint64, s Sizes) []byte {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), s: s}
	g.allowed() // fills g.hosts as Generate does
	var b []byte
	targets := []string{"", "", "", "[linux] ", "[macos] ", "[windows] ", "[linux,macos] "}
	for i := range s.Assertions {
		verdict := g.pick("allow", "deny")
		var line string
		switch k := g.r.IntN(100); {
		case k < 30:
			line = fmt.Sprintf("read %s", pathOf(g.denyRead(g.r.IntN(max(s.DenyRead, 1)))))
		case k < 40:
			line = fmt.Sprintf("read ./src/m%d/sub/.env.local", g.r.IntN(max(s.DenyRead, 1)))
		case k < 65:
			line = fmt.Sprintf("write %s", pathOf(g.writeRoot(g.r.IntN(max(s.AllowWrite, 1)))))
		case k < 70:
			line = fmt.Sprintf("write ./build/b%d/release/app", g.r.IntN(max(s.AllowWrite, 1)))
		case k < 95 && len(g.hosts) > 0:
			line = fmt.Sprintf("connect %s:%s", g.hosts[g.r.IntN(len(g.hosts))], g.pick("443", "22", "80"))
		case k < 95:
			line = fmt.Sprintf("connect host%d.example.com", i)
		default:
			line = fmt.Sprintf("unix-socket /run/user/1000/app%d.sock", g.r.IntN(max(s.AllowUnixSockets, 1)))
		}
		b = fmt.Appendf(b, "%s%s: %s\n", g.pick(targets...), line, verdict)
	}
	return b
}

// pathOf is the spelling of a generated entry, globs and all.
func pathOf(e pathEntry) string {
	switch v := e.value.(type) {
	case string:
		if e.inside != "" && v != "." {
			return e.inside
		}
		return v
	case map[string]any:
		return v["path"].(string)
	}
	return "."
}
