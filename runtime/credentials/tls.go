package credentials

// TLS termination (network.tlsTerminate): the run's CA, the trust bundle
// the command gets, and the Terminator the proxies answer with. The
// leaf certificates are made per connection by the Terminator itself
// (runtime/proxy terminate.go).

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy"
)

// caVars point the command's TLS clients at the run's trust bundle (the
// run's CA, the system roots and extraCaCertPaths) when TLS is terminated.
var caVars = []string{
	"NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE",
	"PIP_CERT", "GIT_SSL_CAINFO", "AWS_CA_BUNDLE", "CARGO_HTTP_CAINFO", "DENO_CERT",
	"CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE", "NIX_SSL_CERT_FILE",
}

// BundleName is the trust bundle's name in its run directory.
const BundleName = "ca-bundle.pem"

// systemBundles are the files the system's trusted roots are read from,
// first found wins (the list Go's crypto/x509 reads on Linux).
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// A TLS is what one run needs to terminate TLS.
type TLS struct {
	// Terminator is what the proxies terminate the command's TLS with.
	Terminator *proxy.Terminator
	// Bundle is the trust bundle the command gets (Env): the run's CA,
	// the system's roots and extraCaCertPaths, as PEM.
	Bundle []byte
	// KeyPath is the CA key file, which the command must not read; ""
	// for an ephemeral CA, which only srt's memory holds.
	KeyPath string
}

// Env are the variables that point the command's TLS clients at the
// trust bundle, written at path.
func (r *TLS) Env(path string) []string {
	env := make([]string, 0, len(caVars))
	for _, v := range caVars {
		env = append(env, v+"="+path)
	}
	return env
}

// hostPath makes a settings path absolute: "~/" against home, a relative
// path against cwd.
func hostPath(p, home, cwd string) string {
	switch {
	case p == "~":
		return home
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case !filepath.IsAbs(p):
		return filepath.Join(cwd, p)
	}
	return filepath.Clean(p)
}

// where names a setting for a message: its key and, when known, its place
// in the settings file.
func where(o policy.Origin, key string) string {
	if o.Pos != "" {
		return fmt.Sprintf("%s (%s)", key, o.Pos)
	}
	return key
}

// NewTLS makes the CA of one run (ephemeral, or caCertPath/caKeyPath,
// "~/" against home and relative to cwd) and its trust bundle; every
// failure is reported here, before anything runs. The Terminator reads
// the excluded hosts and the limits from live at each CONNECT (a policy
// update changes them), and from t when live returns nil. debug receives
// debug lines.
func NewTLS(t *policy.TLSTerminate, home, cwd string, live func() *TLSOptions, debug func(string)) (*TLS, error) {
	r := &TLS{}
	var ca *proxy.CA
	var err error
	if t.CACertPath != "" || t.CAKeyPath != "" {
		if t.CACertPath == "" || t.CAKeyPath == "" {
			return nil, fmt.Errorf("%s: caCertPath and caKeyPath go together; give both, or neither for an ephemeral CA", where(t.Origin, "network.tlsTerminate"))
		}
		certPath, keyPath := hostPath(t.CACertPath, home, cwd), hostPath(t.CAKeyPath, home, cwd)
		certPEM, err := os.ReadFile(certPath)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read the CA certificate %s: %v; point caCertPath at a readable PEM file, or remove caCertPath and caKeyPath for an ephemeral CA", where(t.Origin, "network.tlsTerminate.caCertPath"), certPath, unwrapPath(err))
		}
		keyPEM, err := os.ReadFile(keyPath)
		if err != nil {
			return nil, fmt.Errorf("%s: cannot read the CA key %s: %v; point caKeyPath at a readable PEM private key, or remove caCertPath and caKeyPath for an ephemeral CA", where(t.Origin, "network.tlsTerminate.caKeyPath"), keyPath, unwrapPath(err))
		}
		ca, err = proxy.LoadCA(certPEM, keyPEM)
		clear(keyPEM)
		if err != nil {
			return nil, fmt.Errorf("%s: %s with %s: %v", where(t.Origin, "network.tlsTerminate"), certPath, keyPath, err)
		}
		if time.Now().After(ca.Cert.NotAfter) {
			return nil, fmt.Errorf("%s: the CA certificate %s expired on %s; make a new one, or remove caCertPath and caKeyPath for an ephemeral CA", where(t.Origin, "network.tlsTerminate.caCertPath"), certPath, ca.Cert.NotAfter.UTC().Format(time.DateOnly))
		}
		// The key file is hidden from the command, wherever it is.
		if real, err := filepath.EvalSymlinks(keyPath); err == nil {
			r.KeyPath = real
		} else {
			r.KeyPath = keyPath
		}
	} else if ca, err = proxy.NewCA(); err != nil {
		return nil, fmt.Errorf("network.tlsTerminate: making the run's CA: %w", err)
	}

	// The upstream servers are verified against the system roots and the
	// extra CAs; the command trusts those and the run's CA.
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	var b bytes.Buffer
	b.Write(ca.PEM)
	sys := os.Getenv("SSL_CERT_FILE")
	cands := systemBundles
	if sys != "" {
		cands = append([]string{sys}, systemBundles...)
	}
	for _, f := range cands {
		if certs := pemCertificates(f); len(certs) > 0 {
			b.Write(certs)
			break
		}
	}
	for _, f := range t.ExtraCACertPaths {
		p := hostPath(f, home, cwd)
		certs := pemCertificates(p)
		if len(certs) == 0 {
			debug(fmt.Sprintf("tlsTerminate: extraCaCertPaths %s: no readable CERTIFICATE block, skipped", p))
			continue
		}
		roots.AppendCertsFromPEM(certs)
		b.Write(certs)
	}
	r.Bundle = b.Bytes()
	start := NewTLSOptions(t)
	// The live options are the Manager's latest; a policy that dropped
	// tlsTerminate leaves the run with those it started with.
	opts := func() *TLSOptions {
		if o := live(); o != nil {
			return o
		}
		return start
	}
	r.Terminator = &proxy.Terminator{
		CA: ca, Roots: roots,
		Exclude:          func() policy.HostList { return opts().exclude },
		MaxTunnels:       func() int { return opts().maxTunnels },
		HandshakeTimeout: func() time.Duration { return opts().timeout },
	}
	return r, nil
}

// TLSOptions are the options of tlsTerminate a policy update changes for
// the next CONNECT: the excluded hosts and the limits.
type TLSOptions struct {
	exclude    policy.HostList
	maxTunnels int
	timeout    time.Duration
}

// NewTLSOptions are t's options that a policy update changes.
func NewTLSOptions(t *policy.TLSTerminate) *TLSOptions {
	return &TLSOptions{exclude: t.ExcludeDomains, maxTunnels: t.MaxTunnels, timeout: time.Duration(t.HandshakeTimeoutMs) * time.Millisecond}
}

// unwrapPath drops the path a *PathError repeats.
func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// pemCertificates are the CERTIFICATE blocks of a PEM file, re-encoded
// (nothing else of the file is copied); nil when the file cannot be read.
func pemCertificates(path string) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out bytes.Buffer
	for rest := data; ; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: blk.Bytes})
		}
	}
	return out.Bytes()
}
