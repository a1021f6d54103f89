package compiler

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"errors"
	"fmt"

	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// CompileFile loads a settings file and compiles it with the path rules
// of opts.OS ("" means the host's). It returns the file's diagnostics when
// it is invalid, and an error only for a bug.
func CompileFile(name string, data []byte, opts schema.Options) (*policy.Policy, schema.Diagnostics, error) {
	s, diags := opts.Load(name, data)
	if diags != nil {
		return nil, diags, nil
	}
	p, diags, err := Compile(s, opts)
	if err != nil || diags != nil {
		return nil, diags, err
	}
	sum := sha256.Sum256(data)
	p.SourceSHA256 = hex.EncodeToString(sum[:])
	return p, nil, nil
}

// Compile compiles settings that were loaded already, with the path rules
// of opts.OS ("" means the host's; the other options are for loading).
// Only the Windows reading has diagnostics: spellings the grammar accepts
// but that name no path there without the host's current drive. An error
// is a bug (settings the grammar should have refused), reported rather
// than hidden.
func Compile(s *schema.Settings, opts schema.Options) (*policy.Policy, schema.Diagnostics, error) {
	os := opts.OS
	if os == "" {
		os = schema.HostOS()
	}
	return compile(s, os)
}

// compile compiles s with the path rules of os. Only the Windows reading
// has diagnostics: spellings the grammar accepts but that name no path
// there without the host's current drive.
func compile(s *schema.Settings, os schema.OS) (*policy.Policy, schema.Diagnostics, error) {
	c := &compiler{s: s, os: os}
	p := &policy.Policy{FormatVersion: policy.FormatVersion, Source: s.Pos(schema.Path{}).File, Switches: map[string]policy.Origin{}}
	c.switches = p.Switches
	var err error
	if p.Network, err = c.network(); err != nil {
		return nil, nil, err
	}
	p.Filesystem = c.filesystem()
	p.Process = c.process()
	p.Env = c.env()
	p.IgnoreViolations = s.IgnoreViolations
	if c.bug != nil {
		return nil, nil, c.bug
	}
	if os == schema.OSWindows {
		p.Windows = c.windows()
		p.Windows.SkippedLiterals = c.skipped
	}
	if c.diags != nil {
		return nil, c.diags, nil
	}
	return p, nil, nil
}

type compiler struct {
	s  *schema.Settings
	os schema.OS
	// diags and skipped are filled by the Windows reading of paths.
	diags   schema.Diagnostics
	skipped []policy.PathRule
	// switches collects the Origin of every switch the settings set.
	switches map[string]policy.Origin
	// bug is the first value the grammar should have refused.
	bug error
}

// refused records err, about the value at path, as a value the grammar
// should have refused (the first one is reported).
func (c *compiler) refused(err error, path ...any) {
	if c.bug == nil {
		c.bug = fmt.Errorf("compiler: %s: %w (the grammar should have refused it)", schema.Path(path), err)
	}
}

// word reads the value at path, if set, into a word of the policy's
// vocabulary (policy.SigV4Mode, policy.Decoder, …).
func (c *compiler) word(dst encoding.TextUnmarshaler, v *string, path ...any) {
	if v == nil {
		return
	}
	if err := dst.UnmarshalText([]byte(*v)); err != nil {
		c.refused(err, path...)
	}
}

// flag reads the boolean switch at path, recording where it was set.
func (c *compiler) flag(b *bool, path ...any) bool {
	c.set(b != nil, path...)
	return is(b)
}

// set records the Origin of the switch at path when the settings set it,
// and returns set.
func (c *compiler) set(set bool, path ...any) bool {
	if set {
		c.switches[schema.Path(path).String()] = c.origin(path...)
	}
	return set
}

// origin is the Origin of the value at path.
func (c *compiler) origin(path ...any) policy.Origin {
	p := schema.Path(path)
	o := policy.Origin{Key: p.String()}
	if pos := c.s.Pos(p); pos.Line > 0 {
		o.Pos = pos.String()
	}
	return o
}

func (c *compiler) network() (policy.Network, error) {
	n := c.s.Network
	out := policy.Network{
		DeniedReasons:       n.DeniedDomainReasons,
		StrictAllowlist:     c.flag(n.StrictAllowlist, "network", "strictAllowlist"),
		AllowAllUnixSockets: c.flag(n.AllowAllUnixSockets, "network", "allowAllUnixSockets"),
		AllowLocalBinding:   c.flag(n.AllowLocalBinding, "network", "allowLocalBinding"),
		AllowMachLookup:     n.AllowMachLookup,
		HTTPProxyPort:       deref(n.HTTPProxyPort),
		SOCKSProxyPort:      deref(n.SOCKSProxyPort),
	}
	if m := n.MitmProxy; m != nil {
		out.MitmProxy = &policy.MitmProxy{SocketPath: m.SocketPath, Domains: c.patterns(m.Domains, "network", "mitmProxy", "domains")}
	}
	out.TLSTerminate = c.set(n.TLSTerminate != nil, "network", "tlsTerminate")
	c.set(n.HTTPProxyPort != nil, "network", "httpProxyPort")
	c.set(n.SOCKSProxyPort != nil, "network", "socksProxyPort")
	c.set(n.AllowMachLookup != nil, "network", "allowMachLookup")
	if cr := c.s.Credentials; cr != nil {
		c.flag(cr.AllowPlaintextInject, "credentials", "allowPlaintextInject")
	}
	if t := n.TLSTerminate; t != nil {
		out.TLS = &policy.TLSTerminate{
			CACertPath:         deref(t.CACertPath),
			CAKeyPath:          deref(t.CAKeyPath),
			ExcludeDomains:     c.patterns(t.ExcludeDomains, "network", "tlsTerminate", "excludeDomains"),
			ExtraCACertPaths:   t.ExtraCACertPaths,
			MaxTunnels:         deref(t.MaxTunnels),
			HandshakeTimeoutMs: deref(t.HandshakeTimeoutMs),
			Origin:             c.origin("network", "tlsTerminate"),
		}
	}
	if pp := n.ParentProxy; pp != nil {
		out.ParentProxy = &policy.ParentProxy{HTTP: deref(pp.HTTP), HTTPS: deref(pp.HTTPS), NoProxy: deref(pp.NoProxy)}
	}
	var err error
	if out.Allowed, err = c.hosts("allowedDomains", n.AllowedDomains); err != nil {
		return out, err
	}
	if out.Denied, err = c.hosts("deniedDomains", n.DeniedDomains); err != nil {
		return out, err
	}
	for i, r := range n.DeniedResolvedAddresses {
		prefix, err := policy.ParseAddressRange(r)
		if err != nil {
			c.refused(err, "network", "deniedResolvedAddresses", i)
			continue
		}
		out.DeniedResolvedAddresses = append(out.DeniedResolvedAddresses, policy.AddressRule{Range: r, Prefix: prefix, Origin: c.origin("network", "deniedResolvedAddresses", i)})
	}
	for i, sock := range n.AllowUnixSockets {
		if c.os == schema.OSWindows {
			break // macOS only: the Windows reading leaves them out
		}
		r, _ := c.pathRule(schema.PathEntry{Path: sock}, "network", "allowUnixSockets", i)
		out.AllowUnixSockets = append(out.AllowUnixSockets, r)
	}
	return out, nil
}

func (c *compiler) hosts(key string, entries []string) (policy.HostList, error) {
	l := policy.HostList{}
	for i, e := range entries {
		r, err := policy.ParseHostRule(e)
		if err != nil {
			return nil, fmt.Errorf("compiler: network.%s[%d]: %w (the grammar should have refused it)", key, i, err)
		}
		r.Origin = c.origin("network", key, i)
		l = append(l, r)
	}
	return l, nil
}

// patterns parses the host patterns at path (mitmProxy.domains,
// excludeDomains, injectHosts), each with its origin; nil gives nil.
func (c *compiler) patterns(entries []string, path ...any) policy.HostList {
	if entries == nil {
		return nil
	}
	l := make(policy.HostList, 0, len(entries))
	for i, e := range entries {
		at := append(append([]any{}, path...), i)
		r, err := policy.ParseHostPattern(e)
		if err != nil {
			c.refused(err, at...)
			continue
		}
		r.Origin = c.origin(at...)
		l = append(l, r)
	}
	return l
}

// pathRule normalises one path entry. It reports false for an entry the
// Windows reading refuses or skips (recorded in c.diags or c.skipped).
func (c *compiler) pathRule(e schema.PathEntry, path ...any) (policy.PathRule, bool) {
	if c.os == schema.OSWindows {
		return c.windowsPathRule(e, path...)
	}
	return policy.ParsePathRule(e.Path, e.Literal, c.origin(path...)), true
}

func (c *compiler) pathRules(entries []schema.PathEntry, key string) []policy.PathRule {
	out := []policy.PathRule{}
	for i, e := range entries {
		if r, ok := c.pathRule(e, "filesystem", key, i); ok {
			out = append(out, r)
		}
	}
	return out
}

// Paths every sandboxed command may write (docs/reference.md#default-writable).
var defaultWritable = []policy.Path{
	policy.Abs.Join("dev/stdout"), policy.Abs.Join("dev/stderr"), policy.Abs.Join("dev/null"), policy.Abs.Join("dev/tty"), policy.Abs.Join("dev/dtracehelper"), policy.Abs.Join("dev/autofs_nowait"),
	policy.Abs.Join("tmp/claude"), policy.Abs.Join("private/tmp/claude"),
}

// Convenience directories, writable unless a read deny hides them.
var convenienceWritable = []policy.Path{policy.Home.Join(".npm/_logs"), policy.Home.Join(".claude/debug")}

// MandatoryFiles and MandatoryDirs are the dangerous names; see
// policy.MandatoryFiles.
var (
	MandatoryFiles = policy.MandatoryFiles
	MandatoryDirs  = policy.MandatoryDirs
)

// DefaultSearchDepth is mandatoryDenySearchDepth when the key is absent.
const DefaultSearchDepth = 3

func (c *compiler) filesystem() policy.Filesystem {
	fs := c.s.Filesystem
	out := policy.Filesystem{
		Disabled:   c.flag(fs.Disabled, "filesystem", "disabled"),
		DenyRead:   c.pathRules(fs.DenyRead, "denyRead"),
		AllowRead:  c.pathRules(fs.AllowRead, "allowRead"),
		AllowWrite: []policy.PathRule{},
		DenyWrite:  c.pathRules(fs.DenyWrite, "denyWrite"),
	}
	if cr := c.s.Credentials; cr != nil {
		for i, f := range cr.Files {
			r, ok := c.pathRule(schema.PathEntry{Path: f.Path}, "credentials", "files", i, "path")
			if !ok {
				continue
			}
			if f.Mode == "mask" {
				m := c.masking(f.CredentialOptions, "credentials", "files", i)
				m.MaskDuplicates = is(f.MaskDuplicates)
				r.Mask = &m
				out.CredentialMasks = append(out.CredentialMasks, r)
			} else if !out.Disabled {
				out.DenyRead = append(out.DenyRead, r)
			}
		}
	}
	if out.Disabled {
		// Nothing is protected; masked credential files still apply.
		out.DenyRead, out.AllowRead, out.DenyWrite = []policy.PathRule{}, []policy.PathRule{}, []policy.PathRule{}
		return out
	}
	if c.os == schema.OSWindows {
		// The reference has no default writable paths and no mandatory
		// denies on Windows; the emitter lists that as a residual risk.
		out.AllowWrite = c.pathRules(fs.AllowWrite, "allowWrite")
		return out
	}
	for _, p := range defaultWritable {
		out.AllowWrite = append(out.AllowWrite, policy.PathRule{Path: p, Origin: policy.Default})
	}
	for _, p := range convenienceWritable {
		if !hiddenByRead(p, out.DenyRead, out.AllowRead) {
			out.AllowWrite = append(out.AllowWrite, policy.PathRule{Path: p, Convenience: true, Origin: policy.Default})
		}
	}
	out.AllowWrite = append(out.AllowWrite, c.pathRules(fs.AllowWrite, "allowWrite")...)
	for _, f := range MandatoryFiles {
		out.DenyWrite = append(out.DenyWrite, policy.PathRule{Path: policy.Cwd.Join(f), Origin: policy.Mandatory})
	}
	for _, d := range MandatoryDirs {
		out.DenyWrite = append(out.DenyWrite, policy.PathRule{Path: policy.Cwd.Join(d), Origin: policy.Mandatory})
	}
	scan := &policy.MandatoryScan{
		Depth:     DefaultSearchDepth,
		Files:     MandatoryFiles,
		Dirs:      MandatoryDirs,
		GitConfig: !c.flag(fs.AllowGitConfig, "filesystem", "allowGitConfig"),
		GitDirs:   policy.GitDirs,
		GitFiles:  policy.GitFiles,
		Origin:    policy.Mandatory,
	}
	if scan.GitConfig {
		scan.GitFiles = append(append([]string{}, policy.GitFiles...), policy.GitConfigFiles...)
	}
	if d := c.s.MandatoryDenySearchDepth; d != nil {
		scan.Depth = *d
		scan.Origin = c.origin("mandatoryDenySearchDepth")
		c.set(true, "mandatoryDenySearchDepth")
	}
	out.MandatoryScan = scan
	return out
}

// hiddenByRead reports whether a read deny covers p and no read allow
// inside that deny opens p again.
func hiddenByRead(p policy.Path, deny, allow []policy.PathRule) bool {
	for _, d := range deny {
		if !d.Covers(p) {
			continue
		}
		reopened := false
		for _, a := range allow {
			if a.Covers(p) && d.Covers(a.Path) {
				reopened = true
			}
		}
		if !reopened {
			return true
		}
	}
	return false
}

func (c *compiler) process() policy.Process {
	s := c.s
	p := policy.Process{
		Seccomp:                      []policy.SeccompRule{},
		EnableWeakerNestedSandbox:    c.flag(s.EnableWeakerNestedSandbox, "enableWeakerNestedSandbox"),
		AllowNestedUserNamespaces:    c.flag(s.AllowNestedUserNamespaces, "allowNestedUserNamespaces"),
		EnableWeakerNetworkIsolation: c.flag(s.EnableWeakerNetworkIsolation, "enableWeakerNetworkIsolation"),
		AllowAppleEvents:             c.flag(s.AllowAppleEvents, "allowAppleEvents"),
		AllowPty:                     c.flag(s.AllowPty, "allowPty"),
	}
	if s.BwrapPath != nil {
		p.BwrapPath = *s.BwrapPath
	}
	if l := s.Limits; l != nil {
		for _, k := range []struct {
			kind policy.LimitKind
			name string
			v    *int
		}{{policy.LimitMemory, "memoryMiB", l.MemoryMiB}, {policy.LimitProcesses, "processes", l.Processes}, {policy.LimitCPU, "cpuSeconds", l.CPUSeconds}, {policy.LimitOpenFiles, "openFiles", l.OpenFiles}} {
			if k.v != nil {
				p.Limits = append(p.Limits, policy.Limit{Kind: k.kind, Value: int64(*k.v), Origin: c.origin("limits", k.name)})
			}
		}
	}
	// The keyring rules apply in every sandbox: no setting turns them off.
	p.Seccomp = append(p.Seccomp, policy.SeccompKeyring)
	if !is(s.Network.AllowAllUnixSockets) {
		p.Seccomp = append(p.Seccomp, policy.SeccompUnix)
	}
	if !p.AllowNestedUserNamespaces {
		p.Seccomp = append(p.Seccomp, policy.SeccompNamespaces)
	}
	return p
}

func (c *compiler) env() policy.Env {
	var e policy.Env
	if cr := c.s.Credentials; cr != nil {
		e.AllowPlaintextInject = is(cr.AllowPlaintextInject)
		for i, v := range cr.EnvVars {
			r := policy.EnvRule{Name: v.Name, Origin: c.origin("credentials", "envVars", i)}
			if v.Mode == "mask" {
				r.Masking = c.masking(v.CredentialOptions, "credentials", "envVars", i)
				e.Mask = append(e.Mask, r)
			} else {
				e.Unset = append(e.Unset, r)
			}
		}
		e.AWSPairs = c.awsPairs(cr)
		if v := cr.SigV4; v != nil {
			e.SigV4 = &policy.SigV4{}
			c.word(&e.SigV4.Streaming, v.Streaming, "credentials", "sigv4", "streaming")
			c.word(&e.SigV4.Presigned, v.Presigned, "credentials", "sigv4", "presigned")
			c.word(&e.SigV4.SigV4A, v.SigV4A, "credentials", "sigv4", "sigv4a")
		}
	}
	if g := c.s.Git; g != nil {
		e.GitSafeDirectories = g.SafeDirectories
	}
	return e
}

// masking is what the runtime needs of the options of the masked
// credential at path.
func (c *compiler) masking(o schema.CredentialOptions, path ...any) policy.Masking {
	m := policy.Masking{
		InjectHosts:     c.patterns(o.InjectHosts, append(path, "injectHosts")...),
		BodyInjectHosts: c.patterns(o.BodyInjectHosts, append(path, "bodyInjectHosts")...),
		Extract:         deref(o.Extract),
		MaskClaims:      o.MaskClaims,
	}
	if o.InjectHosts != nil && len(o.InjectHosts) == 0 {
		// A plan could not tell it from nil, which means the allowed hosts.
		c.refused(errors.New("a masked credential's injectHosts may not be empty (the value would go nowhere)"), append(path, "injectHosts")...)
	}
	c.word(&m.OnExtractNoMatch, o.OnExtractNoMatch, append(path, "onExtractNoMatch")...)
	c.word(&m.Decode, o.Decode, append(path, "decode")...)
	return m
}

// Standard names of an AWS credential's variables, paired automatically.
const (
	awsKeyIDVar        = "AWS_ACCESS_KEY_ID"
	awsSecretVar       = "AWS_SECRET_ACCESS_KEY"
	awsSessionTokenVar = "AWS_SESSION_TOKEN"
)

// awsPairs are the explicit credentials.awsPairs (the schema has checked
// that they name distinct variables masked whole), then the standard
// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY pair, with AWS_SESSION_TOKEN
// when it is masked too, when both are masked whole and no explicit pair
// names any of the three.
func (c *compiler) awsPairs(cr *schema.Credentials) []policy.AWSPair {
	var out []policy.AWSPair
	named := map[string]bool{}
	for i, p := range cr.AwsPairs {
		out = append(out, policy.AWSPair{
			AccessKeyIDVar: p.AccessKeyIDVar, SecretAccessKeyVar: p.SecretAccessKeyVar,
			SessionTokenVar: deref(p.SessionTokenVar), Origin: c.origin("credentials", "awsPairs", i),
		})
		named[p.AccessKeyIDVar], named[p.SecretAccessKeyVar], named[deref(p.SessionTokenVar)] = true, true, true
	}
	whole := map[string]int{}
	for i, v := range cr.EnvVars {
		if v.Mode == "mask" && v.Extract == nil && v.Decode == nil {
			whole[v.Name] = i
		}
	}
	id, okID := whole[awsKeyIDVar]
	_, okSecret := whole[awsSecretVar]
	if !okID || !okSecret || named[awsKeyIDVar] || named[awsSecretVar] {
		return out
	}
	auto := policy.AWSPair{AccessKeyIDVar: awsKeyIDVar, SecretAccessKeyVar: awsSecretVar, Origin: c.origin("credentials", "envVars", id)}
	if _, ok := whole[awsSessionTokenVar]; ok && !named[awsSessionTokenVar] {
		auto.SessionTokenVar = awsSessionTokenVar
	}
	return append(out, auto)
}

func is(b *bool) bool { return b != nil && *b }

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
