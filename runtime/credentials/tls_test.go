package credentials

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/internal/testenv"
	"srt.dev/runtime/proxy"
)

func writeKey(t *testing.T, path string, ca *proxy.CA) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestNewTLSErrors: a CA that cannot be used is refused before anything
// runs, naming the setting, its place and the file.
func TestNewTLSErrors(t *testing.T) {
	dir := t.TempDir()
	a, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	b, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(dir, "a.pem"), a.PEM, 0o644)
	writeKey(t, filepath.Join(dir, "b.key"), b)
	origin := policy.Origin{Key: "network.tlsTerminate", Pos: "s.json:2:3"}
	for _, tc := range []struct {
		name, cert, key, want string
	}{
		{"cert alone", "a.pem", "", "network.tlsTerminate (s.json:2:3): caCertPath and caKeyPath go together"},
		{"key alone", "", "b.key", "network.tlsTerminate (s.json:2:3): caCertPath and caKeyPath go together"},
		{"missing cert", "missing.pem", "b.key", "network.tlsTerminate.caCertPath (s.json:2:3): cannot read the CA certificate " + filepath.Join(dir, "missing.pem") + ": no such file or directory"},
		{"missing key", "a.pem", "missing.key", "network.tlsTerminate.caKeyPath (s.json:2:3): cannot read the CA key " + filepath.Join(dir, "missing.key") + ": no such file or directory"},
		{"key of another CA", "a.pem", "b.key", "the key does not belong to the certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTLS(&policy.TLSTerminate{CACertPath: tc.cert, CAKeyPath: tc.key, Origin: origin}, "/nonexistent-home", dir, func() *TLSOptions { return nil }, func(string) {})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewTLS error = %v, want it to hold %q", err, tc.want)
			}
		})
	}
}

// TestNewTLS: the run's CA comes first in the trust bundle, then the
// extra CAs; a CA read from files ("~/" against home) has its key file,
// links resolved, hidden from the command; an ephemeral one has none.
func TestNewTLS(t *testing.T) {
	home := t.TempDir()
	ca, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := proxy.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	testenv.WriteFile(t, filepath.Join(home, "ca.pem"), ca.PEM, 0o644)
	writeKey(t, filepath.Join(home, "real.key"), ca)
	testenv.Symlink(t, filepath.Join(home, "real.key"), filepath.Join(home, "ca.key"))
	testenv.WriteFile(t, filepath.Join(home, "extra.pem"), append([]byte("junk\n"), extra.PEM...), 0o644)
	var skipped []string
	r, err := NewTLS(&policy.TLSTerminate{CACertPath: "~/ca.pem", CAKeyPath: "~/ca.key", ExtraCACertPaths: []string{"extra.pem", "none.pem"}},
		home, home, func() *TLSOptions { return nil }, func(s string) { skipped = append(skipped, s) })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(r.Bundle, ca.PEM) || !bytes.Contains(r.Bundle, extra.PEM) || bytes.Contains(r.Bundle, []byte("junk")) {
		t.Errorf("the bundle does not hold the run's CA first and the extra CA's certificate alone:\n%s", r.Bundle)
	}
	if want := filepath.Join(home, "real.key"); r.KeyPath != want {
		t.Errorf("KeyPath = %q, want %q", r.KeyPath, want)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], filepath.Join(home, "none.pem")) {
		t.Errorf("debug lines = %q, want one naming none.pem", skipped)
	}
	if !r.Terminator.CA.Cert.Equal(ca.Cert) {
		t.Errorf("the terminator signs with another CA")
	}

	r, err = NewTLS(&policy.TLSTerminate{}, home, home, func() *TLSOptions { return nil }, func(string) {})
	if err != nil || r.KeyPath != "" || !bytes.HasPrefix(r.Bundle, r.Terminator.CA.PEM) {
		t.Errorf("ephemeral CA: %+v, %v", r, err)
	}
	env := r.Env("/run/b.pem")
	if len(env) != len(caVars) || env[0] != "NODE_EXTRA_CA_CERTS=/run/b.pem" {
		t.Errorf("Env = %q", env)
	}
}

// TestTLSOptionsLive: the terminator follows the live options, and those
// the run started with when a policy update dropped tlsTerminate.
func TestTLSOptionsLive(t *testing.T) {
	start := &policy.TLSTerminate{MaxTunnels: 3, HandshakeTimeoutMs: 1000}
	var live *TLSOptions
	r, err := NewTLS(start, "/", "/", func() *TLSOptions { return live }, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Terminator.MaxTunnels(); got != 3 {
		t.Errorf("MaxTunnels = %d, want the starting 3", got)
	}
	live = NewTLSOptions(&policy.TLSTerminate{MaxTunnels: 7, HandshakeTimeoutMs: 2000})
	if got := r.Terminator.MaxTunnels(); got != 7 {
		t.Errorf("MaxTunnels = %d, want the live 7", got)
	}
	if got := r.Terminator.HandshakeTimeout().Milliseconds(); got != 2000 {
		t.Errorf("HandshakeTimeout = %d ms, want 2000", got)
	}
}
