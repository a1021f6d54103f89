package golden

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"srt.dev/compiler"
	"srt.dev/emit/wfp"
	"srt.dev/schema"
)

// plan is a compiled Windows plan, read back through its Go types, with
// helpers to find operations.
type plan struct {
	*wfp.Plan
	text string
}

func loadPlan(t *testing.T, name string) plan {
	t.Helper()
	files := compileWindows(t, filepath.Join("windows", name, "settings.json"))
	b, ok := files["windows/plan.json"]
	if !ok {
		t.Fatalf("%s: no plan: %s", name, files["error.txt"])
	}
	var pl wfp.Plan
	if err := json.Unmarshal(b, &pl); err != nil {
		t.Fatal(err)
	}
	return plan{&pl, string(b)}
}

// ops returns the operations of kind op in phase ("" for every phase).
func (p plan) ops(phase, op string) []wfp.Operation {
	var out []wfp.Operation
	for _, ph := range p.Phases {
		if phase != "" && ph.Name != phase {
			continue
		}
		for _, o := range ph.Operations {
			if o.Op == op {
				out = append(out, o)
			}
		}
	}
	return out
}

// aces returns the session's ACE operations on path (Windows spelling,
// compared ignoring case).
func (p plan) aces(path string) []wfp.Operation {
	var out []wfp.Operation
	for _, o := range p.ops("sessionStart", "set-ace") {
		if strings.EqualFold(o.ACE.Path, path) {
			out = append(out, o)
		}
	}
	return out
}

// ace returns the one ACE on path with trustee, type and mask, or fails.
func (p plan) ace(t *testing.T, path, trustee, typ string, m wfp.Mask) wfp.Operation {
	t.Helper()
	for _, o := range p.aces(path) {
		if o.ACE.Trustee == trustee && o.ACE.Type == typ && o.ACE.Mask == m {
			return o
		}
	}
	t.Fatalf("no %s %#08x ACE for %s on %s; ACEs there: %+v", typ, uint32(m), trustee, path, p.aces(path))
	return wfp.Operation{}
}

func (p plan) noACE(t *testing.T, path, typ string, m wfp.Mask) {
	t.Helper()
	for _, o := range p.aces(path) {
		if o.ACE.Type == typ && o.ACE.Mask == m {
			t.Errorf("unexpected %s %#08x ACE on %s: %+v", typ, uint32(m), path, o)
		}
	}
}

func (p plan) lists(t *testing.T) *wfp.AccessLists {
	t.Helper()
	g := p.ops("sessionStart", "acl-grant-persistent")
	if len(g) != 1 {
		t.Fatalf("%d acl-grant-persistent operations, want 1", len(g))
	}
	return g[0].Lists
}

func (p plan) exec(t *testing.T) *wfp.Exec {
	t.Helper()
	x := p.ops("perCommand", "exec")
	if len(x) != 1 {
		t.Fatalf("%d exec operations, want 1", len(x))
	}
	return x[0].Exec
}

// env returns the --env arguments of the exec argv.
func (p plan) env(t *testing.T) []string {
	argv := p.exec(t).Argv
	var out []string
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "--env" {
			out = append(out, argv[i+1])
		}
	}
	return out
}

func (p plan) filters(t *testing.T) []*wfp.Filter {
	var out []*wfp.Filter
	for _, o := range p.ops("install", "wfp-add-filter") {
		out = append(out, o.Filter)
	}
	return out
}

func hasPrefix(list []string, prefix string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return strings.HasPrefix(s, prefix) })
}

func must(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
}

// windowsSpec holds the must and must-not of docs/reference.md#windows-cases,
// checked on the plan of the golden case of the same name. Inputs that no
// settings file can give (install flags, a command's own customConfig,
// the caller's environment, binShell) are checked on the rule the plan
// states for them.
var windowsSpec = map[string]func(t *testing.T, p plan){
	"w01-install-defaults": func(t *testing.T, p plan) {
		must(t, len(p.ops("install", "ensure-group")) == 1 && p.ops("install", "ensure-group")[0].Name == "sandbox-runtime-users", "ensure-group sandbox-runtime-users")
		u := p.ops("install", "ensure-user")
		must(t, len(u) == 1 && u[0].Account.Name == "srt-sandbox" && slices.Contains(u[0].Account.Flags, "DONT_EXPIRE_PASSWD"), "ensure-user srt-sandbox DONT_EXPIRE_PASSWD: %+v", u)
		var groups []string
		for _, m := range p.ops("install", "add-group-member") {
			must(t, m.Member == "sid:user", "member %q", m.Member)
			groups = append(groups, m.Group)
		}
		must(t, len(groups) == 2 && strings.HasPrefix(groups[0], "S-1-5-32-545") && groups[1] == "sid:group", "add-member groups %q", groups)
		must(t, len(p.ops("install", "hide-account-from-logon-screen")) == 1, "hide-from-logon")
		l := p.ops("install", "lsa-add-rights")
		must(t, len(l) == 1 && l[0].Member == "sid:group" && len(l[0].Rights) == 4, "LSA deny rights ×4 on sid:group: %+v", l)
		s := p.ops("install", "wfp-add-sublayer")
		must(t, len(s) == 1 && s[0].Sublayer.GUID == "{2c5d0ad6-5f3b-4d4e-9b8f-1a3e7c9d0b21}" && s[0].Sublayer.Weight == "0x8000", "sublayer: %+v", s)
		f := p.filters(t)
		if len(f) != 4 {
			t.Fatalf("%d filters, want 4", len(f))
		}
		for i, v := range []string{"V4", "V4", "V6", "V6"} {
			must(t, strings.HasSuffix(f[i].Layer, "ALE_AUTH_CONNECT_"+v), "filter %d layer %s", i, f[i].Layer)
			must(t, strings.Contains(f[i].ProviderData, `"tool":"srt-win"`), "filter %d has no srt-win tag", i)
		}
		for _, i := range []int{0, 2} {
			must(t, f[i].Action == "FWP_ACTION_PERMIT" && f[i].Weight == "0x0F80000000000000", "permit %d: %+v", i, f[i])
			must(t, strings.HasPrefix(f[i].Conditions[1].Value, "[60080, 60089]"), "permit range %q", f[i].Conditions[1].Value)
			for _, c := range f[i].Conditions {
				must(t, !strings.Contains(c.Field, "USER"), "a user condition on the PERMIT: %+v", c)
			}
		}
		must(t, strings.HasPrefix(f[0].Conditions[0].Value, "127.0.0.0/8") && f[2].Conditions[0].Value == "::1", "loopback addresses")
		for _, i := range []int{1, 3} {
			must(t, f[i].Action == "FWP_ACTION_BLOCK" && f[i].Weight == "0x0F40000000000000" && f[i].Conditions[0].Field == "FWPM_CONDITION_ALE_USER_ID" &&
				strings.Contains(f[i].Conditions[0].Value, "(A;;CC;;;sid:user)"), "block %d: %+v", i, f[i])
		}
	},
	"w02-open-loopback": func(t *testing.T, p plan) {
		f := p.filters(t)
		must(t, len(f) == 6, "%d filters, want 3 per layer", len(f))
		must(t, slices.Contains(p.exec(t).Argv, "--allow-loopback"), "exec argv without --allow-loopback")
		must(t, slices.Contains(p.env(t), "no_proxy=localhost,127.0.0.1,::1"), "no no_proxy")
		must(t, !hasPrefix(p.env(t), "NO_PROXY="), "NO_PROXY in upper case")
		v := p.ops("sessionStart", "wfp-verify")[0].Check
		must(t, strings.HasPrefix(v.MustBlock[0], "127.0.0.1:1 "), "verify must-block %q", v.MustBlock)
	},
	"w03-proxy-port-range": func(t *testing.T, p plan) {
		for _, f := range p.filters(t) {
			if f.Action == "FWP_ACTION_PERMIT" {
				must(t, strings.HasPrefix(f.Conditions[1].Value, "[55080, 55089]"), "permit range %q", f.Conditions[1].Value)
			}
		}
		l := p.ops("sessionStart", "proxy-listen")[0].Check.PortRange
		must(t, slices.Equal(l, []int{55080, 55089}), "proxy-listen %v", l)
		must(t, strings.Contains(p.ops("sessionStart", "wfp-verify")[0].Check.Target, "outside 55080-55089"), "verify target")
		// The range's validation: width at most 64, no port 0, in order.
		for r, ok := range map[string]bool{"[1,65]": true, "[1,66]": false, "[0,9]": false, "[60089,60080]": false} {
			src := `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "windows": {"proxyPortRange": ` + r + `}}`
			_, diags := schema.Options{OS: schema.OSWindows}.Load("s.json", []byte(src))
			must(t, (diags == nil) == ok, "proxyPortRange %s: valid = %v, want %v (%v)", r, diags == nil, ok, diags)
		}
	},
	"w04-write-root": func(t *testing.T, p plan) {
		for _, tr := range []string{"sid:group", `sid:cap(C:\proj)`} {
			a := p.ace(t, `C:\proj`, tr, "ALLOW", wfp.MaskWrite).ACE
			must(t, a.Inheritance == "subtree (OI)(CI)" && strings.HasPrefix(a.Lifetime, "kept"), "write grant %+v", a)
			must(t, !strings.Contains(a.Rights, "FILE_DELETE_CHILD"), "FILE_DELETE_CHILD in the write grant")
		}
		must(t, strings.Contains(strings.Join(p.exec(t).Argv, " "), `--write-root C:\proj`), "no --write-root")
		g := p.exec(t).Environment.GitConfig.Entries
		must(t, slices.Contains(g, wfp.GitConfigKV{Key: "safe.directory", Value: "C:/proj"}) && slices.Contains(g, wfp.GitConfigKV{Key: "safe.directory", Value: "C:/proj/*"}), "safe.directory: %+v", g)
	},
	"w05-read-grant": func(t *testing.T, p plan) {
		a := p.ace(t, `C:\tools`, "sid:user", "ALLOW", wfp.MaskRead).ACE
		must(t, a.Inheritance == "subtree (OI)(CI)" && a.Lifetime == "released at session reset", "read grant %+v", a)
	},
	"w06-deny-read-file": func(t *testing.T, p plan) {
		p.ace(t, `C:\proj\.env`, "sid:user", "DENY", wfp.MaskDenyRead)
		p.ace(t, `C:\proj`, "sid:user", "DENY", wfp.MaskDeleteChild)
	},
	"w07-deny-write-dir": func(t *testing.T, p plan) {
		a := p.ace(t, `C:\proj\dist`, "sid:user", "DENY", wfp.MaskDenyWrite).ACE
		must(t, !strings.Contains(a.Rights, "SYNCHRONIZE") && !strings.Contains(a.Rights, "READ_CONTROL"), "deny-write rights %q", a.Rights)
		p.ace(t, `C:\proj`, "sid:user", "DENY", wfp.MaskDeleteChild)
	},
	"w08-write-under-deny-write": func(t *testing.T, p plan) {
		l := p.lists(t)
		must(t, slices.Equal(l.Write, []string{`C:\p`}) && slices.Equal(l.Read, []string{`C:\p\vendor\x`}) && slices.Equal(l.DenyWrite, []string{`C:\p\vendor`}), "lists %+v", l)
		p.ace(t, `C:\p\vendor\x`, "sid:user", "ALLOW", wfp.MaskRead)
		p.noACE(t, `C:\p\vendor\x`, "ALLOW", wfp.MaskWrite)
	},
	"w09-deny-write-case-and-separator": func(t *testing.T, p plan) {
		l := p.lists(t)
		must(t, len(l.Write) == 0 && slices.Equal(l.Read, []string{`C:\p`}) && slices.Equal(l.DenyWrite, []string{`C:\P\`}), "lists %+v", l)
		p.noACE(t, `C:\p`, "ALLOW", wfp.MaskWrite)
		must(t, !strings.Contains(strings.Join(p.exec(t).Argv, " "), "--write-root"), "a --write-root")
	},
	"w10-credential-file-ranks-first": func(t *testing.T, p plan) {
		l := p.lists(t)
		must(t, slices.Equal(l.DenyRead, []string{`C:\x`, `C:\u\.aws`}), "denyRead %q", l.DenyRead)
		must(t, len(l.Read) == 0 && len(l.Write) == 0, "grants %+v", l)
		must(t, !strings.Contains(p.text, `"type": "ALLOW"`) || len(p.ops("sessionStart", "set-ace")) > 0 && !slices.ContainsFunc(p.ops("sessionStart", "set-ace"), func(o wfp.Operation) bool { return o.ACE.Type == "ALLOW" }), "an ALLOW ACE in the session")
	},
	"w11-deny-missing-directory": func(t *testing.T, p plan) {
		must(t, slices.Equal(p.lists(t).DenyRead, []string{`C:\p\new\dir\`}), "denyRead %q", p.lists(t).DenyRead)
		c := p.ops("sessionStart", "create-placeholder")
		must(t, len(c) == 1 && c[0].Path == `C:\p\new\dir` && strings.HasPrefix(c[0].Kind, "directory"), "placeholder %+v", c)
		d := p.ace(t, `C:\p\new`, "sid:user", "DENY", wfp.MaskDelete)
		must(t, d.ACE.Inheritance == "this object only" && strings.Contains(d.Condition, "created"), "DELETE deny %+v", d)
		p.ace(t, `C:\p\new\dir`, "sid:user", "DENY", wfp.MaskDenyRead)
		p.ace(t, `C:\p\new`, "sid:user", "DENY", wfp.MaskDeleteChild)
	},
	"w12-grant-missing-path": func(t *testing.T, p plan) {
		o := p.ace(t, `C:\missing`, "sid:user", "ALLOW", wfp.MaskRead)
		must(t, strings.HasPrefix(o.Condition, "only if the path exists"), "unconditional grant on a path that may be missing: %q", o.Condition)
		must(t, len(p.ops("sessionStart", "create-placeholder")) == 0, "a placeholder for a grant")
	},
	"w13-glob-and-brackets": func(t *testing.T, p plan) {
		g := p.ops("sessionStart", "expand-glob")
		must(t, len(g) == 1 && g[0].Path == `C:\p\**\*.pem` && g[0].Kind == "denyRead", "expand-glob %+v", g)
		must(t, slices.Equal(p.lists(t).DenyRead, []string{`C:\app\[prod].env`}), "denyRead %q", p.lists(t).DenyRead)
		p.ace(t, `C:\app\[prod].env`, "sid:user", "DENY", wfp.MaskDenyRead)
		must(t, len(p.aces(`C:\p\**\*.pem`)) == 0, "a deny on the pattern text")
	},
	"w14-path-spellings": func(t *testing.T, p plan) {
		l := p.lists(t)
		must(t, slices.Equal(l.DenyRead, []string{`%USERPROFILE%\x`, `C:\y`, `C:\z`, `\\srv\share\f`}), "denyRead %q", l.DenyRead)
		must(t, slices.Equal(l.Read, []string{`%USERPROFILE%\x\pub`, `\\srv\share\g`}), "read %q", l.Read)
		must(t, !strings.Contains(p.text, `c:\\`) && !strings.Contains(p.text, `\\\\?\\`), "c:\\ or \\\\?\\ in the plan")
		for _, path := range []string{`\\srv\share\f`, `\\srv\share\g`} {
			for _, o := range p.aces(path) {
				must(t, strings.HasPrefix(o.Condition, "UNC path: passed through unprobed"), "UNC %s: %q", path, o.Condition)
			}
		}
	},
	"w15-per-command-grants-refused": func(t *testing.T, p plan) {
		r := p.ops("perCommand", "refuse-per-command-grants")
		must(t, len(r) == 1 && strings.Contains(r[0].Purpose, "allowWrite") && strings.Contains(r[0].OnFailure, "before anything launches"), "refusal %+v", r)
		ops := p.Phases[3].Operations
		must(t, slices.IndexFunc(ops, func(o wfp.Operation) bool { return o.Op == "refuse-per-command-grants" }) < slices.IndexFunc(ops, func(o wfp.Operation) bool { return o.Op == "exec" }), "refusal after exec")
	},
	"w16-per-command-deny-read": func(t *testing.T, p plan) {
		d := p.ops("perCommand", "per-command-denies")
		must(t, len(d) == 1 && strings.Contains(d[0].Purpose, "--deny-read-except G for each topmost session grant strictly beneath"), "per-command denies %+v", d)
		must(t, !slices.Contains(p.exec(t).Argv, "--deny-read"), "a --deny-read from the settings file")
	},
	"w17-exec-environment": func(t *testing.T, p plan) {
		env := p.env(t)
		for _, want := range []string{"NODE_USE_ENV_PROXY=1", "https_proxy=http://srt.", "SANDBOX_RUNTIME=1", "RSYNC_PROXY=localhost:", "GIT_CONFIG_VALUE_<n+2>=openssl", "NPM_TOKEN=<sentinel"} {
			must(t, hasPrefix(env, want), "no --env %s…", want)
		}
		must(t, strings.HasPrefix(env[len(env)-1], "GIT_CONFIG_COUNT="), "GIT_CONFIG_COUNT not last: %q", env[len(env)-1])
		for _, not := range []string{"HTTPS_PROXY=", "Https_Proxy=", "TMPDIR=", "NO_PROXY=", "no_proxy=", "GIT_SSH_COMMAND=", "GITHUB_TOKEN="} {
			must(t, !hasPrefix(env, not), "--env %s…", not)
		}
		x := p.exec(t).Environment
		must(t, strings.Contains(x.MergeRule, "ignoring case") && len(x.NotInherited) == 1 && x.NotInherited[0].Name == "GITHUB_TOKEN", "merge rule / not inherited: %+v", x)
	},
	"w18-git-safe-directories": func(t *testing.T, p plan) {
		g := p.exec(t).Environment.GitConfig
		want := []wfp.GitConfigKV{{Key: "safe.directory", Value: "*"}, {Key: "http.schannelUseSSLCAInfo", Value: "true"}, {Key: "http.schannelCheckRevoke", Value: "false"}, {Key: "http.sslBackend", Value: "openssl"}}
		must(t, slices.Equal(g.Entries, want), "git config %+v", g.Entries)
		must(t, strings.Contains(g.Numbering, "caller's GIT_CONFIG_COUNT") && strings.Contains(g.Numbering, "GIT_CONFIG_COUNT=0 gets no GIT_CONFIG_* variables"), "numbering %q", g.Numbering)
	},
	"w19-shells": func(t *testing.T, p plan) {
		x := p.exec(t)
		must(t, x.Argv[0] == `C:\Program Files\srt\srt-win.exe`, "helper %q", x.Argv[0])
		tail := x.Argv[slices.Index(x.Argv, "--")+1:]
		must(t, slices.Equal(tail[:4], []string{`%SystemRoot%\System32\cmd.exe`, "/d", "/s", "/c"}) && len(tail) == 5, "shell %q", tail)
		byShell := map[string][]string{}
		for _, s := range x.Shells {
			byShell[s.BinShell] = s.Argv
		}
		must(t, slices.Equal(byShell["pwsh"][:3], []string{"pwsh.exe", "-NoProfile", "-Command"}), "pwsh %q", byShell["pwsh"])
		must(t, byShell["an absolute path to bash or sh"][1] == "-c", "bash %q", byShell["an absolute path to bash or sh"])
		must(t, byShell["bash or sh without a path"][0] == "refused: bin_shell_invalid", "bare bash %q", byShell["bash or sh without a path"])
	},
	"w20-loopback-mismatch": func(t *testing.T, p plan) {
		for _, phase := range []string{"sessionStart", "perCommand"} {
			c := p.ops(phase, "check-loopback-mode")
			must(t, len(c) == 1 && strings.HasPrefix(c[0].OnFailure, "wfp_loopback_mismatch") && strings.Contains(c[0].OnFailure, "--allow-loopback --force") && strings.HasPrefix(c[0].Check.Expect, "open"), "%s: %+v", phase, c)
		}
		ops := p.Phases[3].Operations
		must(t, slices.IndexFunc(ops, func(o wfp.Operation) bool { return o.Op == "check-loopback-mode" }) < slices.IndexFunc(ops, func(o wfp.Operation) bool { return o.Op == "exec" }), "the loopback check after exec")
	},
	"w21-filesystem-disabled": func(t *testing.T, p plan) {
		l := p.lists(t)
		must(t, len(l.Read) == 0 && len(l.Write) == 0 && len(l.DenyWrite) == 0 && slices.Equal(l.DenyRead, []string{`C:\u\.npmrc`}), "lists %+v", l)
		must(t, !slices.Contains(p.exec(t).Argv, "--write-root"), "--write-root")
	},
	"w22-tls-terminate": func(t *testing.T, p plan) {
		must(t, slices.Contains(p.lists(t).Read, "<directory of the TLS trust bundle>"), "no read grant on the trust bundle's directory")
		p.ace(t, "<directory of the TLS trust bundle>", "sid:user", "ALLOW", wfp.MaskRead)
		n := 0
		for _, e := range p.env(t) {
			if strings.HasSuffix(e, "=<trust bundle path, with forward slashes>") {
				n++
			}
		}
		must(t, n == 11 && hasPrefix(p.env(t), "NODE_EXTRA_CA_CERTS="), "%d CA variables, want 11", n)
		g := p.exec(t).Environment.GitConfig.Entries
		must(t, slices.Contains(g, wfp.GitConfigKV{Key: "http.schannelUseSSLCAInfo", Value: "true"}), "schannel keys %+v", g)
	},
	"w24-write-root-above-profile-exclusion": func(t *testing.T, p plan) {
		ops := p.Phases[2].Operations
		r := slices.IndexFunc(ops, func(o wfp.Operation) bool { return o.Op == "refuse-profile-exclusion-conflicts" })
		g := slices.IndexFunc(ops, func(o wfp.Operation) bool { return o.Op == "acl-grant-persistent" || o.Op == "set-ace" })
		must(t, r >= 0 && r < g && ops[r].OnFailure == "profile_exclusion_read_grant", "refusal %d before the first ACL op %d", r, g)
		must(t, slices.ContainsFunc(ops[r].Paths, func(s string) bool {
			return strings.HasPrefix(s, "%USERPROFILE% (filesystem.allowWrite[0] @ settings.json:2:82) lies above the protected exclusions %USERPROFILE%\\.ssh, ")
		}), "known conflicts %q", ops[r].Paths)
		must(t, slices.ContainsFunc(ops[r].Paths, func(s string) bool {
			return s == `%USERPROFILE%\.aws\config (filesystem.allowRead[0] @ settings.json:2:47) is or lies inside the protected exclusion %USERPROFILE%\.aws`
		}), "allowRead inside .aws: %q", ops[r].Paths)
	},
}

// TestWindowsSpecCases checks the plans of the golden cases against the
// spec's musts and must-nots, so that a golden file rewritten with
// -update cannot drift from the spec unnoticed.
func TestWindowsSpecCases(t *testing.T) {
	for name, check := range windowsSpec {
		t.Run(name, func(t *testing.T) { check(t, loadPlan(t, name)) })
	}
	// W23: the command line would be too long: refused at compile time.
	files := compileWindows(t, filepath.Join("windows", "w23-command-line-too-long", "settings.json"))
	if e := string(files["error.txt"]); !strings.Contains(e, "argv_too_long") {
		t.Errorf("W23: %q, want argv_too_long", e)
	}
}

// TestWindowsMacOSKeysIgnored is docs/reference.md#windows-cases W25: the macOS-only keys change
// nothing in the plan.
func TestWindowsMacOSKeysIgnored(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("windows", "w25-macos-keys-ignored", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	with := string(data)
	// The same file without the macOS keys, positions unchanged: they come
	// last.
	i := strings.Index(with, `,
 "allowPty"`)
	if i < 0 {
		t.Fatal("the case no longer ends with the macOS keys")
	}
	without := with[:i] + "}\n"
	with = strings.Replace(with, `"deniedDomains": []`, `"deniedDomains": [], "allowUnixSockets": ["/x.sock"], "allowAllUnixSockets": true, "allowMachLookup": ["com.x.*"]`, 1)
	plans := map[string][]byte{}
	for name, src := range map[string]string{"with": with, "without": without} {
		p, diags, err := compiler.CompileFile("settings.json", []byte(src), schema.Options{OS: schema.OSWindows})
		if err != nil || diags != nil {
			t.Fatalf("%s: %v %v", name, err, diags)
		}
		p.SourceSHA256 = "" // the bytes differ, by construction
		b, err := wfp.Bytes(p)
		if err != nil {
			t.Fatal(err)
		}
		plans[name] = b
	}
	if string(plans["with"]) != string(plans["without"]) {
		t.Error("the macOS-only keys changed the Windows plan")
	}
}
