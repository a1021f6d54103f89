package compiler

import (
	"strings"
	"testing"

	"srt.dev/schema"
)

// TestCompileWindows checks what the Windows reading changes in a policy:
// Windows paths, no POSIX defaults or mandatory denies, the windows keys,
// skipped literals, and diagnostics with positions.
func TestCompileWindows(t *testing.T) {
	src := `{"network": {"allowedDomains": [], "deniedDomains": [], "allowUnixSockets": ["/x.sock"]},
 "filesystem": {"denyRead": ["%USERPROFILE%\\.ssh", {"path": "C:\\a*", "literal": true}], "allowWrite": ["C:\\proj"], "denyWrite": ["C:\\proj\\dist\\"]},
 "windows": {"sublayerGuid": "4F3C2A10-8B1E-4C8D-9A57-2B0E6F1D3C42", "wfpSublayerGuid": "00000000-0000-0000-0000-000000000001", "proxyPortRange": [55080, 55089]}}`
	p, diags, err := CompileFile("s.json", []byte(src), schema.Options{OS: schema.OSWindows})
	if err != nil || diags != nil {
		t.Fatalf("CompileFile: %v %v", err, diags)
	}
	fs := p.Filesystem
	if len(fs.DenyRead) != 1 || fs.DenyRead[0].Path.String() != "${HOME}/.ssh" {
		t.Errorf("DenyRead = %+v, want only ${HOME}/.ssh", fs.DenyRead)
	}
	if len(fs.AllowWrite) != 1 || fs.AllowWrite[0].Path.String() != "C:/proj" || fs.AllowWrite[0].Origin.Key != "filesystem.allowWrite[0]" {
		t.Errorf("AllowWrite = %+v, want only C:/proj (no POSIX defaults)", fs.AllowWrite)
	}
	if len(fs.DenyWrite) != 1 || !fs.DenyWrite[0].TrailingSeparator || fs.MandatoryScan != nil {
		t.Errorf("DenyWrite = %+v, scan %+v; want the one entry with its trailing separator, no mandatory denies", fs.DenyWrite, fs.MandatoryScan)
	}
	if p.Network.AllowUnixSockets != nil {
		t.Errorf("AllowUnixSockets = %+v, want none in a Windows reading", p.Network.AllowUnixSockets)
	}
	w := p.Windows
	if w == nil {
		t.Fatal("no Windows section")
	}
	if w.SublayerGUID.Value != "{4f3c2a10-8b1e-4c8d-9a57-2b0e6f1d3c42}" || w.SublayerGUID.Origin.Key != "windows.sublayerGuid" {
		t.Errorf("SublayerGUID = %+v, want the current key's GUID, braced and lower case", w.SublayerGUID)
	}
	if w.ProxyPortRange.Low != 55080 || w.ProxyPortRange.High != 55089 || w.SandboxUser.Value != "srt-sandbox" || w.SandboxUser.Origin.Key != "default" {
		t.Errorf("windows = %+v", w)
	}
	if len(w.SkippedLiterals) != 1 || w.SkippedLiterals[0].Origin.Key != "filesystem.denyRead[1]" {
		t.Errorf("SkippedLiterals = %+v, want denyRead[1]", w.SkippedLiterals)
	}

	// The POSIX reading of the same file has no Windows section.
	p, _, err = CompileFile("s.json", []byte(src), schema.Options{OS: schema.OSPosix})
	if err != nil || p.Windows != nil {
		t.Fatalf("POSIX reading: %v, Windows = %+v", err, p.Windows)
	}

	bad := `{"network": {"allowedDomains": [], "deniedDomains": []},
 "filesystem": {"denyRead": ["/etc/secret"], "allowWrite": [], "denyWrite": []}}`
	_, diags, err = CompileFile("b.json", []byte(bad), schema.Options{OS: schema.OSWindows})
	if err != nil || len(diags) != 1 {
		t.Fatalf("CompileFile(bad) = %v, %v; want one diagnostic", diags, err)
	}
	if got := diags[0].String(); !strings.HasPrefix(got, "b.json:2:30: filesystem.denyRead[0]: read with the Windows path rules: ") || !strings.Contains(got, "no drive letter") {
		t.Errorf("diagnostic = %q", got)
	}
}
