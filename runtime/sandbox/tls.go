package sandbox

import (
	"bytes"
	"crypto/rand"
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

// bundleName is the trust bundle's name in its run directory.
const bundleName = "ca-bundle.pem"

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

// A runTLS is what one run needs to terminate TLS: the terminator the
// proxies use, the trust bundle the command gets, and the CA key file to
// hide from the command ("" for an ephemeral CA, which only srt's memory
// holds).
type runTLS struct {
	term    *proxy.Terminator
	bundle  []byte
	keyPath string
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

// newRunTLS makes the CA of one run (ephemeral, or caCertPath/caKeyPath)
// and its trust bundle. Every failure is reported before anything runs.
func newRunTLS(t *policy.TLSTerminate, home, cwd string, live func() *tlsOptions, debug func(string)) (*runTLS, error) {
	r := &runTLS{}
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
			r.keyPath = real
		} else {
			r.keyPath = keyPath
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
	r.bundle = b.Bytes()
	start, err := newTLSOptions(t)
	if err != nil {
		return nil, err
	}
	// The live options are the Manager's latest; a policy that dropped
	// tlsTerminate leaves the run with those it started with.
	opts := func() *tlsOptions {
		if o := live(); o != nil {
			return o
		}
		return start
	}
	r.term = &proxy.Terminator{
		CA: ca, Roots: roots,
		Exclude:          func() policy.HostList { return opts().exclude },
		MaxTunnels:       func() int { return opts().maxTunnels },
		HandshakeTimeout: func() time.Duration { return opts().timeout },
	}
	return r, nil
}

// tlsOptions are the options of tlsTerminate a policy update changes for
// the next CONNECT: the excluded hosts and the limits.
type tlsOptions struct {
	exclude    policy.HostList
	maxTunnels int
	timeout    time.Duration
}

func newTLSOptions(t *policy.TLSTerminate) (*tlsOptions, error) {
	exclude, err := policy.ParseHostList(t.ExcludeDomains)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where(t.Origin, "network.tlsTerminate.excludeDomains"), err)
	}
	return &tlsOptions{exclude: exclude, maxTunnels: t.MaxTunnels, timeout: time.Duration(t.HandshakeTimeoutMs) * time.Millisecond}, nil
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

// sentinelAlphabet is what a sentinel's random part is made of.
const sentinelAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// minSentinel is the length below which a sentinel is not shortened to
// its value's: shorter ones would be too easy to meet by chance in a
// request.
const minSentinel = 24

// sentinel returns the stand-in for a masked value: "fake_value_" and
// random letters and digits, as long as the value (at least minSentinel
// bytes), so that lengths in requests stay right.
func sentinel(real string) (string, error) {
	n := max(len(real), minSentinel)
	b := make([]byte, n-len("fake_value_"))
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	for i := range b {
		b[i] = sentinelAlphabet[int(b[i])%len(sentinelAlphabet)]
	}
	return "fake_value_" + string(b), nil
}

// maskedEnv prepares the masked and removed variables of a run: it
// returns the command's base environment without the removed ones and
// with every masked value replaced by its sentinel (so that no process
// srt starts holds a real value), the sentinels by name, and the
// injector the proxies swap them back with (and re-sign the SigV4
// requests of e.AWSPairs with). A masked variable that is not set is
// refused: the command would run without the credential it was
// configured for; so is an AWS pair whose key id or secret is empty.
func maskedEnv(env []string, e policy.Env, allowed policy.HostList) ([]string, map[string]string, *proxy.Injector, error) {
	for _, u := range e.Unset {
		env = unsetEnv(env, u.Name)
	}
	if len(e.Mask) == 0 {
		return env, nil, nil, nil
	}
	if err := checkAWSPairs(e, env); err != nil {
		return nil, nil, nil, err
	}
	sentinels := map[string]string{}
	secrets := map[string]proxy.Secret{}
	in := &proxy.Injector{Plaintext: e.AllowPlaintextInject}
	for _, m := range e.Mask {
		real, ok := lookupEnv(env, m.Name)
		if !ok {
			return nil, nil, nil, fmt.Errorf("%s: %s is masked but not set in srt's environment; set it, or remove the entry (the command would run without the credential)", where(m.Origin, m.Origin.Key), m.Name)
		}
		if real == "" {
			sentinels[m.Name] = ""
			continue
		}
		s, err := sentinel(real)
		if err != nil {
			return nil, nil, nil, err
		}
		sentinels[m.Name] = s
		env = setEnv(env, m.Name, s)
		hosts := allowed
		if m.InjectHosts != nil {
			var err error
			if hosts, err = policy.ParseHostList(m.InjectHosts); err != nil {
				return nil, nil, nil, fmt.Errorf("%s: injectHosts: %w", where(m.Origin, m.Origin.Key), err)
			}
		}
		secret := proxy.Secret{
			Name: m.Name, Sentinel: s, Real: real,
			// Ports are not part of an inject scope.
			Inject: func(host string) bool {
				for _, r := range hosts {
					r.Port = 0
					if r.Match(host, 0) {
						return true
					}
				}
				return false
			},
		}
		secrets[m.Name] = secret
		in.Secrets = append(in.Secrets, secret)
	}
	in.AWS = awsKeys(e, secrets)
	return env, sentinels, in, nil
}

// lookupEnv is the value of the last NAME= entry of env.
func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}
