package credentials

import (
	"strings"
	"testing"

	"srt.dev/compiler/policy"
)

// TestAWSPairsEnv: a pair links the sentinels of its variables; a pair
// whose key id or secret is unset or empty stops the run, naming the
// pair's setting.
func TestAWSPairsEnv(t *testing.T) {
	allowed, _ := policy.ParseHostList([]string{"s3.amazonaws.com", "example.com"})
	e := policy.Env{
		Mask: []policy.EnvRule{{Name: "K"}, {Name: "S"}, {Name: "T", Masking: policy.Masking{InjectHosts: policy.HostList{{Entry: "s3.amazonaws.com", Host: "s3.amazonaws.com"}}}}},
		AWSPairs: []policy.AWSPair{{AccessKeyIDVar: "K", SecretAccessKeyVar: "S", SessionTokenVar: "T",
			Origin: policy.Origin{Key: "credentials.awsPairs[0]", Pos: "s.json:3:5"}}},
	}
	env := []string{"K=AKIAIOSFODNN7EXAMPLE", "S=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "T=token-token-token-token"}
	m, err := MaskEnv(env, e, allowed, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	out, sentinels, in := m.env, m.values, m.inject
	if len(in.AWS) != 1 {
		t.Fatalf("AWS keys = %+v, want one", in.AWS)
	}
	k := in.AWS[0]
	if k.SentinelID != sentinels["K"] || k.RealID != "AKIAIOSFODNN7EXAMPLE" || k.Secret != "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY" || k.SentinelToken != sentinels["T"] || k.RealToken != "token-token-token-token" {
		t.Errorf("key = %+v, sentinels %v", k, sentinels)
	}
	if !k.Inject("s3.amazonaws.com") || k.Inject("example.com") {
		t.Errorf("the pair must be injected only where all its variables are: s3.amazonaws.com")
	}
	for _, v := range out {
		if strings.Contains(v, "EXAMPLE") {
			t.Errorf("the command's environment holds a real value: %s", v)
		}
	}

	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"secret unset", []string{"K=a", "T=b"}, "credentials.awsPairs[0].secretAccessKeyVar (s.json:3:5): S is not set in srt's environment"},
		{"key id empty", []string{"K=", "S=b", "T=c"}, "credentials.awsPairs[0].accessKeyIdVar (s.json:3:5): K is empty in srt's environment"},
	} {
		_, err := MaskEnv(tc.env, e, allowed, func(string) {})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: MaskEnv error = %v, want it to begin %q", tc.name, err, tc.want)
		}
	}
}
