package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"srt.dev/internal/sigv4test"
)

// The stand-ins the command holds for testKeyID, testSecret and
// testToken.
const (
	fakeKeyID  = "fake_value_keyid0123456"
	fakeSecret = "fake_value_secret0123456789abcdefghijklmn"
	fakeToken  = "fake_value_token0123456789abcdefghijklmnopqrstu"
)

// awsUpstream verifies every request's signature with the real key (the
// AWS SDK signs a copy and the signatures must match): 200 "verified",
// or 401 and why. It echoes the Authorization header and query it got.
var awsUpstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Got-Authorization", r.Header.Get("Authorization"))
	w.Header().Set("X-Got-Query", r.URL.RawQuery)
	w.Header().Set("X-Got-Body-Sha256", hashBody(body))
	if err := sigv4test.Verify(r, body, testKeyID, testSecret, testToken); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, "not verified: %v", err)
		return
	}
	io.WriteString(w, "verified")
})

// awsInjector masks testKeyID/testSecret/testToken for s3.test.
func awsInjector(pol *atomic.Pointer[SigV4Policy]) *Injector {
	inject := func(h string) bool { return h == "s3.test" }
	return &Injector{
		Secrets: []Secret{
			{Name: "AWS_ACCESS_KEY_ID", Sentinel: fakeKeyID, Real: testKeyID, Inject: inject},
			{Name: "AWS_SECRET_ACCESS_KEY", Sentinel: fakeSecret, Real: testSecret, Inject: inject},
			{Name: "AWS_SESSION_TOKEN", Sentinel: fakeToken, Real: testToken, Inject: inject},
		},
		AWS: []AWSKey{{
			Name: "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY", KeyIDVar: "AWS_ACCESS_KEY_ID",
			SentinelID: fakeKeyID, RealID: testKeyID, Secret: testSecret,
			SentinelToken: fakeToken, RealToken: testToken, Inject: inject,
		}},
		SigV4: func() SigV4Policy { return *pol.Load() },
	}
}

// newAWSBed is a terminating proxy in front of awsUpstream; it returns a
// client that trusts the run's CA, and the live SigV4 policy.
func newAWSBed(t *testing.T) (*http.Client, *atomic.Pointer[SigV4Policy]) {
	upAddr, upCA := serveUpstream(t, awsUpstream)
	runCA, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(upCA.Cert)
	e := tlsEgress(&upAddr, &Terminator{CA: runCA, Roots: roots})
	pol := &atomic.Pointer[SigV4Policy]{}
	pol.Store(&SigV4Policy{})
	e.Inject = awsInjector(pol)
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go (&HTTP{Egress: e}).Serve(context.Background(), pl)
	t.Cleanup(func() { pl.Close() })
	trust := x509.NewCertPool()
	trust.AddCert(runCA.Cert)
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("srt", "tok"), Host: pl.Addr().String()}),
		TLSClientConfig: &tls.Config{RootCAs: trust},
	}}, pol
}

// awsRequest is a request the command makes: signed by the SDK with the
// stand-ins.
type awsRequest struct {
	method, url, body, service string
	header                     http.Header
	payload                    string // "" means the body's hash
	presign                    bool
}

func (a awsRequest) make(t *testing.T) *http.Request {
	t.Helper()
	r, err := http.NewRequest(a.method, a.url, strings.NewReader(a.body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range a.header {
		r.Header[k] = v
	}
	service := a.service
	if service == "" {
		service = "s3"
	}
	if a.presign {
		u, err := sigv4test.Presign(r, fakeKeyID, fakeSecret, service, "us-east-1", time.Now())
		if err != nil {
			t.Fatal(err)
		}
		r.URL, _ = url.Parse(u)
		return r
	}
	if err := sigv4test.Sign(r, []byte(a.body), fakeKeyID, fakeSecret, fakeToken, service, "us-east-1", time.Now(), a.payload); err != nil {
		t.Fatal(err)
	}
	return r
}

func do(t *testing.T, c *http.Client, r *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := c.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestSigV4Resign: requests the command signs with the stand-in key
// reach the upstream signed with the real one.
func TestSigV4Resign(t *testing.T) {
	c, _ := newAWSBed(t)
	tests := []struct {
		name string
		req  awsRequest
	}{
		{"GET", awsRequest{method: "GET", url: "https://s3.test/bucket/key.txt"}},
		{"GET with a query", awsRequest{method: "GET", url: "https://s3.test/bucket?list-type=2&prefix=a%20b%2Bc&delimiter=%2F&z=~"}},
		{"PUT with body and content hash", awsRequest{method: "PUT", url: "https://s3.test/bucket/k", body: "hello world",
			header: http.Header{"Content-Type": {"text/plain"}, "X-Amz-Meta-Note": {"a  b"}, "X-Amz-Content-Sha256": {hashBody([]byte("hello world"))}}}},
		{"PUT with UNSIGNED-PAYLOAD", awsRequest{method: "PUT", url: "https://s3.test/bucket/k", body: "unsigned body", payload: unsignedPayload,
			header: http.Header{"X-Amz-Content-Sha256": {unsignedPayload}}}},
		{"POST without content hash", awsRequest{method: "POST", url: "https://s3.test/", service: "sts", body: "Action=GetCallerIdentity&Version=2011-06-15",
			header: http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}}},
		{"non-S3 path", awsRequest{method: "GET", url: "https://s3.test/2015-03-31/functions/my%3Afn", service: "lambda"}},
		{"unsigned streaming trailer", awsRequest{method: "PUT", url: "https://s3.test/bucket/k", body: "5\r\nhello\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n", payload: streamingUnsignedTrailer,
			header: http.Header{"X-Amz-Content-Sha256": {streamingUnsignedTrailer}, "Content-Encoding": {"aws-chunked"}, "X-Amz-Trailer": {"x-amz-checksum-crc32"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, c, tt.req.make(t))
			if resp.StatusCode != 200 || body != "verified" {
				t.Fatalf("status %d, body %q; the upstream got Authorization %q", resp.StatusCode, body, resp.Header.Get("X-Got-Authorization"))
			}
			if got := resp.Header.Get("X-Got-Body-Sha256"); got != hashBody([]byte(tt.req.body)) {
				t.Errorf("the upstream got a body of hash %s, want the command's %q", got, tt.req.body)
			}
		})
	}
}

// TestSigV4NotResignable: the shapes that cannot be re-signed are refused
// with a body naming the setting, and forwarded as signed when the
// setting says passthrough (a change that applies to the next request).
func TestSigV4NotResignable(t *testing.T) {
	c, pol := newAWSBed(t)
	tests := []struct {
		name, setting string
		req           func(t *testing.T) *http.Request
		pass          SigV4Policy
	}{
		{"streaming", "credentials.sigv4.streaming", func(t *testing.T) *http.Request {
			return awsRequest{method: "PUT", url: "https://s3.test/b/k", body: "chunks", payload: "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
				header: http.Header{"X-Amz-Content-Sha256": {"STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}, "X-Amz-Decoded-Content-Length": {"6"}}}.make(t)
		}, SigV4Policy{Streaming: true}},
		{"presigned", "credentials.sigv4.presigned", func(t *testing.T) *http.Request {
			return awsRequest{method: "GET", url: "https://s3.test/b/k?X-Amz-Expires=300", presign: true}.make(t)
		}, SigV4Policy{Presigned: true}},
		{"sigv4a", "credentials.sigv4.sigv4a", func(t *testing.T) *http.Request {
			r, _ := http.NewRequest("GET", "https://s3.test/b/k", nil)
			r.Header.Set("X-Amz-Date", time.Now().UTC().Format(amzDateFormat))
			r.Header.Set("X-Amz-Region-Set", "*")
			r.Header.Set("Authorization", "AWS4-ECDSA-P256-SHA256 Credential="+fakeKeyID+"/20261203/s3/aws4_request, SignedHeaders=host;x-amz-date;x-amz-region-set, Signature=3045022100ab")
			return r
		}, SigV4Policy{SigV4A: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pol.Store(&SigV4Policy{})
			resp, body := do(t, c, tt.req(t))
			if resp.StatusCode != 403 || resp.Header.Get("X-Proxy-Error") != "sigv4-not-resignable" || !strings.Contains(body, tt.setting) || !strings.Contains(body, "AWS_ACCESS_KEY_ID") {
				t.Fatalf("deny: status %d, body %q; want 403 naming %s", resp.StatusCode, body, tt.setting)
			}
			pol.Store(&tt.pass)
			r := tt.req(t)
			sent := r.Header.Get("Authorization")
			resp, _ = do(t, c, r)
			if resp.StatusCode != 401 {
				t.Fatalf("passthrough: status %d, want the upstream's 401", resp.StatusCode)
			}
			if got := resp.Header.Get("X-Got-Authorization"); got != sent {
				t.Errorf("passthrough: the upstream got Authorization %q, want it unchanged: %q", got, sent)
			}
			if tt.name == "presigned" && !strings.Contains(resp.Header.Get("X-Got-Query"), "X-Amz-Credential="+fakeKeyID) {
				t.Errorf("passthrough: the upstream got query %q, want the stand-in key's", resp.Header.Get("X-Got-Query"))
			}
		})
	}
}

// TestSigV4Elsewhere: the same request to a host outside the key's inject
// hosts goes out as the command signed it.
func TestSigV4Elsewhere(t *testing.T) {
	c, _ := newAWSBed(t)
	r := awsRequest{method: "GET", url: "https://other.test/b/k"}.make(t)
	sent := r.Header.Get("Authorization")
	resp, _ := do(t, c, r)
	if got := resp.Header.Get("X-Got-Authorization"); resp.StatusCode != 401 || got != sent || !strings.Contains(got, fakeKeyID) {
		t.Fatalf("status %d, upstream got Authorization %q, want %q", resp.StatusCode, got, sent)
	}
}

// TestSigV4Malformed: a request that names the stand-in key but cannot be
// read is refused, never forwarded with the real key.
func TestSigV4Malformed(t *testing.T) {
	c, _ := newAWSBed(t)
	for _, tc := range []struct{ name, auth, date string }{
		{"no signature", "AWS4-HMAC-SHA256 Credential=" + fakeKeyID + "/20261203/us-east-1/s3/aws4_request, SignedHeaders=host", "20261203T010203Z"},
		{"bad scope", "AWS4-HMAC-SHA256 Credential=" + fakeKeyID + "/20261203/s3/aws4_request, SignedHeaders=host, Signature=00", "20261203T010203Z"},
		{"no date", "AWS4-HMAC-SHA256 Credential=" + fakeKeyID + "/20261203/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00", ""},
	} {
		r, _ := http.NewRequest("GET", "https://s3.test/b/k", nil)
		r.Header.Set("Authorization", tc.auth)
		if tc.date != "" {
			r.Header.Set("X-Amz-Date", tc.date)
		}
		resp, body := do(t, c, r)
		if resp.StatusCode != 403 || !strings.Contains(body, "cannot re-sign") {
			t.Errorf("%s: status %d, body %q; want 403", tc.name, resp.StatusCode, body)
		}
	}
}

// TestSigV4OtherHost: a request signed with the stand-in key whose Host
// header names another host than its tunnel's is not re-signed (srt
// makes no signature for a host the request does not go to) and not
// forwarded: 421.
func TestSigV4OtherHost(t *testing.T) {
	c, _ := newAWSBed(t)
	for _, host := range []string{"iam.amazonaws.com", "s3.test:444"} {
		r, _ := http.NewRequest("GET", "https://s3.test/b/k", nil)
		r.Host = host
		if err := sigv4test.Sign(r, nil, fakeKeyID, fakeSecret, fakeToken, "iam", "us-east-1", time.Now(), ""); err != nil {
			t.Fatal(err)
		}
		resp, body := do(t, c, r)
		if resp.StatusCode != 421 || resp.Header.Get("X-Proxy-Error") != "misdirected-request" || resp.Header.Get("X-Got-Authorization") != "" {
			t.Errorf("Host %s: status %d, body %q, the upstream got Authorization %q; want 421 and nothing forwarded", host, resp.StatusCode, body, resp.Header.Get("X-Got-Authorization"))
		}
	}
}

// TestSigV4Plaintext: on plain HTTP a request is re-signed only with
// allowPlaintextInject.
func TestSigV4Plaintext(t *testing.T) {
	up := httptest.NewServer(awsUpstream)
	defer up.Close()
	upAddr := strings.TrimPrefix(up.URL, "http://")
	for _, plaintext := range []bool{false, true} {
		e := tlsEgress(&upAddr, nil)
		pol := &atomic.Pointer[SigV4Policy]{}
		pol.Store(&SigV4Policy{})
		e.Inject = awsInjector(pol)
		e.Inject.Plaintext = plaintext
		pl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go (&HTTP{Egress: e}).Serve(context.Background(), pl)
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", User: url.UserPassword("srt", "tok"), Host: pl.Addr().String()})}}
		resp, body := do(t, c, awsRequest{method: "PUT", url: "http://s3.test/b/k", body: "plain"}.make(t))
		pl.Close()
		if verified := resp.StatusCode == 200; verified != plaintext {
			t.Errorf("allowPlaintextInject=%v: status %d, body %q", plaintext, resp.StatusCode, body)
		}
	}
}
