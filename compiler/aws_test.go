package compiler

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"srt.dev/compiler/policy"
	"srt.dev/schema"
)

// TestAWSPairs pins which masked variables become AWS credentials: the
// explicit pairs, and the standard names when they are masked whole.
func TestAWSPairs(t *testing.T) {
	const head = `{"network": {"allowedDomains": ["s3.amazonaws.com"], "deniedDomains": [], "tlsTerminate": {}}, "filesystem": {"denyRead": [], "allowWrite": [], "denyWrite": []}, "credentials": `
	mask := func(names ...string) string {
		s := ""
		for i, n := range names {
			if i > 0 {
				s += ","
			}
			s += `{"name": "` + n + `", "mode": "mask"}`
		}
		return s
	}
	tests := []struct {
		name  string
		cred  string
		want  []string // accessKeyIdVar/secretAccessKeyVar/sessionTokenVar
		sigv4 *policy.SigV4
	}{
		{"standard pair", `{"envVars": [` + mask("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") + `]}`, []string{"AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/"}, nil},
		{"standard trio", `{"envVars": [` + mask("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN") + `]}`, []string{"AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN"}, nil},
		{"secret not masked", `{"envVars": [` + mask("AWS_ACCESS_KEY_ID") + `, {"name": "AWS_SECRET_ACCESS_KEY", "mode": "deny"}]}`, nil, nil},
		{"key id extracted", `{"envVars": [{"name": "AWS_ACCESS_KEY_ID", "mode": "mask", "extract": "(.*)"}, ` + mask("AWS_SECRET_ACCESS_KEY") + `]}`, nil, nil},
		{"explicit pair", `{"envVars": [` + mask("K", "S", "T") + `], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S", "sessionTokenVar": "T"}]}`, []string{"K/S/T"}, nil},
		{"explicit pair names a standard variable", `{"envVars": [` + mask("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "S") + `], "awsPairs": [{"accessKeyIdVar": "AWS_ACCESS_KEY_ID", "secretAccessKeyVar": "S"}]}`, []string{"AWS_ACCESS_KEY_ID/S/"}, nil},
		{"token in another pair", `{"envVars": [` + mask("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "K", "S") + `], "awsPairs": [{"accessKeyIdVar": "K", "secretAccessKeyVar": "S", "sessionTokenVar": "AWS_SESSION_TOKEN"}]}`, []string{"K/S/AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/"}, nil},
		{"sigv4", `{"envVars": [], "sigv4": {"presigned": "passthrough"}}`, nil, &policy.SigV4{Presigned: "passthrough"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, diags, err := CompileFile("s.json", []byte(head+tt.cred+"}"), schema.Options{OS: schema.OSPosix})
			if err != nil {
				t.Fatalf("CompileFile: %v\n%v", err, diags)
			}
			var got []string
			for _, a := range p.Env.AWSPairs {
				got = append(got, a.AccessKeyIDVar+"/"+a.SecretAccessKeyVar+"/"+a.SessionTokenVar)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AWSPairs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.sigv4, p.Env.SigV4); diff != "" {
				t.Errorf("SigV4 (-want +got):\n%s", diff)
			}
		})
	}
	p, _, err := CompileFile("s.json", []byte(head+`{"envVars": [`+mask("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")+`]}}`), schema.Options{OS: schema.OSPosix})
	if err != nil {
		t.Fatal(err)
	}
	got := p.Env.AWSPairs[0]
	if got.Origin.Key != "credentials.envVars[0]" || got.Origin.Pos == "" {
		t.Errorf("origin = %+v, want credentials.envVars[0] with a position", got.Origin)
	}
}
