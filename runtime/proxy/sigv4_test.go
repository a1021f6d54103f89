package proxy

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"srt.dev/internal/sigv4test"
)

const (
	testKeyID  = "AKIAIOSFODNN7EXAMPLE"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	testToken  = "FwoGZXIvYXdzEXAMPLETOKEN//////////wEaDExample+Token="
)

var testTime = time.Date(2026, 12, 3, 1, 2, 3, 0, time.UTC)

// TestSigV4MatchesSDK signs requests with the AWS SDK and checks that
// signV4, given the SDK's scope, signed headers and payload hash, makes
// the same signature.
func TestSigV4MatchesSDK(t *testing.T) {
	tests := []struct {
		name, method, url, service string
		header                     http.Header
		body                       string
		payload                    string // "" means the body's hash
		token                      string
	}{
		{name: "GET", method: "GET", url: "https://examplebucket.s3.amazonaws.com/test.txt", service: "s3"},
		{name: "PUT with body", method: "PUT", url: "https://examplebucket.s3.amazonaws.com/dir/a%20file.txt", service: "s3", body: "Welcome to Amazon S3.",
			header: http.Header{"Content-Type": {"text/plain"}}},
		{name: "unsigned payload", method: "PUT", url: "https://b.s3.amazonaws.com/k", service: "s3", body: "data", payload: "UNSIGNED-PAYLOAD",
			header: http.Header{"X-Amz-Content-Sha256": {"UNSIGNED-PAYLOAD"}}},
		{name: "query needing canonical encoding", method: "GET", service: "s3",
			url: "https://b.s3.amazonaws.com/?prefix=a+b%2Fc&list-type=2&delimiter=%2F&max-keys=5&z=~tilde&a=%E2%9C%93&empty&dup=2&dup=1&sp=a%20b&star=*"},
		{name: "multiple signed headers", method: "POST", url: "https://b.s3.amazonaws.com/k?uploads", service: "s3", body: "x",
			header: http.Header{
				"Content-Type":        {"application/octet-stream"},
				"X-Amz-Meta-Author":   {"  two   spaces  inside  "},
				"X-Amz-Meta-Multi":    {"one", "two"},
				"X-Amz-Storage-Class": {"STANDARD"},
				"Range":               {"bytes=0-9"},
			}},
		{name: "session token", method: "GET", url: "https://sts.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15", service: "sts", token: testToken},
		{name: "non-S3 path escaped twice", method: "GET", url: "https://lambda.us-east-1.amazonaws.com/2015-03-31/functions/my%3Afn/invocations", service: "lambda",
			body: `{"k": "v"}`},
		{name: "S3 path with escapes", method: "GET", url: "https://b.s3.amazonaws.com/a%3Ab/%E2%9C%93/c+d", service: "s3"},
		{name: "empty path", method: "GET", url: "https://ec2.amazonaws.com?Action=DescribeRegions", service: "ec2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := http.NewRequest(tt.method, tt.url, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.header {
				r.Header[k] = v
			}
			if err := sigv4test.Sign(r, []byte(tt.body), testKeyID, testSecret, tt.token, tt.service, "us-east-1", testTime, tt.payload); err != nil {
				t.Fatal(err)
			}
			a, err := parseAuthorization(r.Header.Get("Authorization"))
			if err != nil {
				t.Fatalf("parseAuthorization(%q): %v", r.Header.Get("Authorization"), err)
			}
			scope, err := parseScope(a.Scope)
			if err != nil {
				t.Fatal(err)
			}
			payload := tt.payload
			if payload == "" {
				payload = hashBody([]byte(tt.body))
			}
			got := signV4(r, testSecret, r.Header.Get("X-Amz-Date"), scope, a.SignedHeaders, payload)
			if got != a.Signature {
				t.Errorf("signV4 = %s, want the SDK's %s\ncanonical request:\n%s", got, a.Signature, canonicalRequest(r, scope.Service, a.SignedHeaders, payload))
			}
		})
	}
}

// TestParseAuthorization covers the header's grammar.
func TestParseAuthorization(t *testing.T) {
	good := "AWS4-HMAC-SHA256 Credential=AKID/20261203/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abcd"
	a, err := parseAuthorization(good)
	if err != nil || a.KeyID != "AKID" || a.Scope != "20261203/us-east-1/s3/aws4_request" || strings.Join(a.SignedHeaders, ";") != "host;x-amz-date" || a.Signature != "abcd" {
		t.Fatalf("parseAuthorization(good) = %+v, %v", a, err)
	}
	if a.String() != good {
		t.Errorf("String() = %q, want %q", a.String(), good)
	}
	for _, bad := range []string{
		"",
		"Bearer x",
		"AWS4-HMAC-SHA256",
		"AWS4-HMAC-SHA256 Credential=AKID/s, SignedHeaders=host",
		"AWS4-HMAC-SHA256 Credential=AKID, SignedHeaders=host, Signature=ab",
		"AWS4-HMAC-SHA256 Credential=AKID/s, Credential=B/s, SignedHeaders=host, Signature=ab",
		"AWS4-HMAC-SHA256 Credential=AKID/s, SignedHeaders=Host, Signature=ab",
		"AWS4-HMAC-SHA256 Credential=AKID/s, SignedHeaders=host;;x, Signature=ab",
		"AWS4-HMAC-SHA256 Credential=AKID/s, SignedHeaders=host, Signature=ab, Extra=1",
	} {
		if a, err := parseAuthorization(bad); err == nil {
			t.Errorf("parseAuthorization(%q) = %+v, want an error", bad, a)
		}
	}
}

// FuzzParseAuthorization: any header either fails to parse or
// round-trips through String.
func FuzzParseAuthorization(f *testing.F) {
	f.Add("AWS4-HMAC-SHA256 Credential=AKID/20261203/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature=abcd")
	f.Add("AWS4-ECDSA-P256-SHA256 Credential=AKID/20261203/s3/aws4_request,SignedHeaders=host,Signature=00")
	f.Add("AWS4-HMAC-SHA256 Credential=/,,,=")
	f.Fuzz(func(t *testing.T, v string) {
		a, err := parseAuthorization(v)
		credentialKeyID(v)
		if err != nil {
			return
		}
		b, err := parseAuthorization(a.String())
		if err != nil {
			t.Fatalf("parseAuthorization(%q) = %+v, but its String %q does not parse: %v", v, a, a.String(), err)
		}
		if b.String() != a.String() {
			t.Fatalf("round trip %q != %q", b.String(), a.String())
		}
		if _, err := parseScope(a.Scope); err == nil && strings.Count(a.Scope, "/") != 3 {
			t.Fatalf("parseScope accepted %q", a.Scope)
		}
	})
}

// BenchmarkSigV4Resign is the proxy's cost of re-signing one request:
// GET with no body, and PUT of 1 MiB without x-amz-content-sha256 (the
// body is hashed).
func BenchmarkSigV4Resign(b *testing.B) {
	pol := &atomic.Pointer[SigV4Policy]{}
	pol.Store(&SigV4Policy{})
	in := awsInjector(pol)
	for _, size := range []int{0, 1 << 20} {
		body := strings.Repeat("x", size)
		method := "GET"
		if size > 0 {
			method = "PUT"
		}
		r, _ := http.NewRequest(method, "https://s3.test/bucket/key?list-type=2&prefix=a", strings.NewReader(body))
		if err := sigv4test.Sign(r, []byte(body), fakeKeyID, fakeSecret, fakeToken, "s3", "us-east-1", time.Now(), ""); err != nil {
			b.Fatal(err)
		}
		r.Header.Del("X-Amz-Content-Sha256")
		b.Run(method+"/"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				c := r.Clone(r.Context())
				c.Body = io.NopCloser(strings.NewReader(body))
				if refused, _ := in.request(c, "s3.test", true, func(leftStandIn) {}); refused != "" {
					b.Fatal(refused)
				}
			}
		})
	}
}
