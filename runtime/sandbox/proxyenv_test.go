package sandbox

import (
	"slices"
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
