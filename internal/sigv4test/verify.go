// Package sigv4test checks AWS SigV4 signatures with the AWS SDK for Go
// v2 signer, an implementation independent of srt's own. Only tests
// import it: the SDK is never part of an srt binary.
package sigv4test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Sign signs r as an SDK client would, with the key id, secret and
// session token ("" for none) given, for service and region at t, over
// every header r has. payloadHash "" means the SHA-256 of body.
func Sign(r *http.Request, body []byte, keyID, secret, token, service, region string, t time.Time, payloadHash string) error {
	if payloadHash == "" {
		payloadHash = hashHex(body)
	}
	return v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret, SessionToken: token},
		r, payloadHash, service, region, t, func(o *v4.SignerOptions) { o.DisableURIPathEscaping = service == "s3" })
}

// Presign returns r's URL presigned as an SDK client would.
func Presign(r *http.Request, keyID, secret, service, region string, t time.Time) (string, error) {
	u, _, err := v4.NewSigner().PresignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret},
		r, "UNSIGNED-PAYLOAD", service, region, t, func(o *v4.SignerOptions) { o.DisableURIPathEscaping = service == "s3" })
	return u, err
}

// Verify checks the Authorization header of a request as a server
// received it (r.Host is its host, body its body): the SDK signs a copy
// holding only the headers the request says it signed, with keyID,
// secret and token, at its X-Amz-Date, in its scope, and the two
// signatures must be equal. The payload hash is x-amz-content-sha256
// when sent, else the SHA-256 of body.
func Verify(r *http.Request, body []byte, keyID, secret, token string) error {
	auth := r.Header.Get("Authorization")
	alg, rest, _ := strings.Cut(auth, " ")
	if alg != "AWS4-HMAC-SHA256" {
		return fmt.Errorf("authorization %q is not AWS4-HMAC-SHA256", auth)
	}
	parts := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[k] = v
	}
	id, scope, _ := strings.Cut(parts["Credential"], "/")
	if id != keyID {
		return fmt.Errorf("signed with key id %q, want %q", id, keyID)
	}
	sc := strings.Split(scope, "/")
	if len(sc) != 4 {
		return fmt.Errorf("scope %q", scope)
	}
	t, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date: %v", err)
	}
	if got := r.Header.Get("X-Amz-Security-Token"); got != token {
		return fmt.Errorf("X-Amz-Security-Token = %q, want %q", got, token)
	}
	c, err := http.NewRequest(r.Method, "https://"+r.Host+r.URL.RequestURI(), nil)
	if err != nil {
		return err
	}
	c.Host = r.Host
	for _, name := range strings.Split(parts["SignedHeaders"], ";") {
		switch name {
		case "host":
		case "content-length":
			c.ContentLength, _ = strconv.ParseInt(r.Header.Get("Content-Length"), 10, 64)
			if c.ContentLength == 0 {
				c.ContentLength = r.ContentLength
			}
		default:
			c.Header[http.CanonicalHeaderKey(name)] = r.Header.Values(name)
		}
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if err := Sign(c, body, keyID, secret, token, sc[2], sc[1], t, payload); err != nil {
		return err
	}
	if want := c.Header.Get("Authorization"); want != auth {
		return fmt.Errorf("signature does not verify:\n got  %s\n want %s", auth, want)
	}
	return nil
}

func hashHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
