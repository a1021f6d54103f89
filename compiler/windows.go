package compiler

import (
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// windowsPathRule is pathRule for the Windows reading: a spelling with no
// meaning there becomes a diagnostic, and a literal that names nothing is
// set aside in SkippedLiterals.
func (c *compiler) windowsPathRule(e schema.PathEntry, path ...any) (policy.PathRule, bool) {
	wp, err := policy.NormalizeWindows(e.Path, e.Literal)
	if err != nil {
		c.diag(schema.Path(path), "read with the Windows path rules: "+err.Error())
		return policy.PathRule{}, false
	}
	r := policy.PathRule{Path: wp.Path, Pattern: wp.Pattern, Literal: e.Literal, TrailingSeparator: wp.TrailingSeparator, Origin: c.origin(path...)}
	if wp.Skip {
		c.skipped = append(c.skipped, r)
		return r, false
	}
	return r, true
}

// diag records a problem with the value at path.
func (c *compiler) diag(path schema.Path, msg string) {
	pos := c.s.Pos(path)
	c.diags = append(c.diags, schema.Diagnostic{File: pos.File, Line: pos.Line, Col: pos.Col, Path: path, Message: msg})
}

// windowsKeys are the cross-platform keys whose origin the Windows plan
// names (policy.Windows.KeyOrigins).
var windowsKeys = [][]any{
	{"network", "allowedDomains"},
	{"network", "allowLocalBinding"},
	{"network", "tlsTerminate"},
	{"network", "httpProxyPort"},
	{"network", "socksProxyPort"},
	{"filesystem", "disabled"},
	{"git", "safeDirectories"},
}

// windows fills in the windows.* keys and their defaults.
func (c *compiler) windows() *policy.Windows {
	w := &policy.Windows{
		Backend:        policy.Setting{Value: policy.DefaultWindowsBackend, Origin: policy.Default},
		SandboxUser:    policy.Setting{Value: policy.DefaultSandboxUser, Origin: policy.Default},
		SublayerGUID:   policy.Setting{Value: policy.DefaultSublayerGUID, Origin: policy.Default},
		ProxyPortRange: policy.PortRange{Low: policy.DefaultProxyPortLow, High: policy.DefaultProxyPortHigh, Origin: policy.Default},
		SrtWinPath:     policy.Setting{Origin: policy.Default},
	}
	for _, k := range windowsKeys {
		if o := c.origin(k...); o.Pos != "" {
			if w.KeyOrigins == nil {
				w.KeyOrigins = map[string]policy.Origin{}
			}
			w.KeyOrigins[o.Key] = o
		}
	}
	sw := c.s.Windows
	if sw == nil {
		return w
	}
	if sw.Backend != nil {
		w.Backend = policy.Setting{Value: *sw.Backend, Origin: c.origin("windows", "backend")}
	}
	if sw.SandboxUser != nil {
		w.SandboxUser = policy.Setting{Value: *sw.SandboxUser, Origin: c.origin("windows", "sandboxUser")}
	}
	// The deprecated alias first, so that the current key wins when both
	// are written.
	if sw.WfpSublayerGUID != nil {
		w.SublayerGUID = policy.Setting{Value: "{" + strings.ToLower(*sw.WfpSublayerGUID) + "}", Origin: c.origin("windows", "wfpSublayerGuid")}
	}
	if sw.SublayerGUID != nil {
		w.SublayerGUID = policy.Setting{Value: "{" + strings.ToLower(*sw.SublayerGUID) + "}", Origin: c.origin("windows", "sublayerGuid")}
	}
	if r := sw.ProxyPortRange; r != nil {
		w.ProxyPortRange = policy.PortRange{Low: r[0], High: r[1], Origin: c.origin("windows", "proxyPortRange")}
	}
	if sw.SrtWin != nil {
		w.SrtWinPath = policy.Setting{Value: sw.SrtWin.Path, Origin: c.origin("windows", "srtWin", "path")}
	}
	return w
}
