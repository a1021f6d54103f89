package sandbox

import (
	"slices"
	"strings"
	"testing"

	"srt.dev/compiler/policy"
)

// TestProxyEnvNode: Node reads HTTP_PROXY and HTTPS_PROXY only with
// NODE_USE_ENV_PROXY=1 (22.21 and later, 24.5 and later), so the
// command's environment sets it on Linux and macOS, as the Windows plan
// does.
func TestProxyEnvNode(t *testing.T) {
	env := proxyEnv("tok", "key", "/usr/bin/srt", policy.ReferenceNoProxy, 3128, 1080)
	if !slices.Contains(env, "NODE_USE_ENV_PROXY=1") {
		t.Errorf("proxyEnv lacks NODE_USE_ENV_PROXY=1:\n%q", env)
	}
}

// TestRedacted: the proxy password is replaced wherever it appears in a
// word of the command line (the proxy URLs, CLOUDSDK_PROXY_PASSWORD), and
// the rest is kept.
func TestRedacted(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	argv := []string{"bwrap"}
	for _, kv := range proxyEnv(token, "key", "/usr/bin/srt", "localhost", 3128, 1080) {
		k, v, _ := strings.Cut(kv, "=")
		argv = append(argv, "--setenv", k, v)
	}
	r := &Result{Argv: argv, secrets: []string{token}}
	got := strings.Join(r.Redacted(), " ")
	if strings.Contains(got, token) {
		t.Fatalf("Redacted() holds the password:\n%s", got)
	}
	for _, want := range []string{"HTTP_PROXY http://srt.key:" + Redaction + "@localhost:3128", "CLOUDSDK_PROXY_PASSWORD " + Redaction, "socks5h://srt.key:" + Redaction + "@localhost:1080"} {
		if !strings.Contains(got, want) {
			t.Errorf("Redacted() lacks %q:\n%s", want, got)
		}
	}
	if strings.Join(r.Argv, " ") == got || !strings.Contains(strings.Join(r.Argv, " "), token) {
		t.Errorf("Redacted() changed Argv")
	}
}
