package credentials

// AWS keys (credentials.awsPairs, credentials.sigv4): the masked
// variables of a pair become the key the proxy re-signs SigV4 requests
// with.

import (
	"fmt"
	"strings"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/proxy"
)

// checkAWSPairs refuses a pair whose key id or secret is not set, or
// empty, in srt's environment env: the command's AWS requests could not
// be signed. An empty session token means none.
func checkAWSPairs(e policy.Env, env []string) error {
	for _, p := range e.AWSPairs {
		for _, v := range []struct{ name, field string }{{p.AccessKeyIDVar, "accessKeyIdVar"}, {p.SecretAccessKeyVar, "secretAccessKeyVar"}} {
			key := p.Origin.Key
			if strings.HasPrefix(key, "credentials.awsPairs") {
				key += "." + v.field
			}
			switch real, ok := lookupEnv(env, v.name); {
			case !ok:
				return fmt.Errorf("%s: %s is not set in srt's environment; set it, or remove the pair (the command's AWS requests could not be signed)", where(p.Origin, key), v.name)
			case real == "":
				return fmt.Errorf("%s: %s is empty in srt's environment; set it, or remove the pair (an AWS request cannot be signed without it)", where(p.Origin, key), v.name)
			}
		}
	}
	return nil
}

// awsKeys links the masked variables of e.AWSPairs (checked by
// checkAWSPairs) into the AWS keys the proxy re-signs SigV4 requests
// with; secrets are the masked values by variable name. A pair's
// requests are re-signed only for the hosts every one of its variables
// may be injected into.
func awsKeys(e policy.Env, secrets map[string]proxy.Secret) []proxy.AWSKey {
	var keys []proxy.AWSKey
	for _, p := range e.AWSPairs {
		id, secret := secrets[p.AccessKeyIDVar], secrets[p.SecretAccessKeyVar]
		k := proxy.AWSKey{
			Name:       p.AccessKeyIDVar + "/" + p.SecretAccessKeyVar,
			KeyIDVar:   p.AccessKeyIDVar,
			SentinelID: id.Sentinel, RealID: id.Real, Secret: secret.Real,
		}
		inject := []func(string) bool{id.Inject, secret.Inject}
		if tok, ok := secrets[p.SessionTokenVar]; ok && p.SessionTokenVar != "" {
			k.SentinelToken, k.RealToken = tok.Sentinel, tok.Real
			inject = append(inject, tok.Inject)
		}
		k.Inject = func(host string) bool {
			for _, f := range inject {
				if f == nil || !f(host) {
					return false
				}
			}
			return true
		}
		keys = append(keys, k)
	}
	return keys
}

// SigV4Policy is the proxy's form of credentials.sigv4 (nil: deny all).
func SigV4Policy(s *policy.SigV4) *proxy.SigV4Policy {
	if s == nil {
		return &proxy.SigV4Policy{}
	}
	return &proxy.SigV4Policy{
		Streaming: s.Streaming.Passthrough(),
		Presigned: s.Presigned.Passthrough(),
		SigV4A:    s.SigV4A.Passthrough(),
	}
}
