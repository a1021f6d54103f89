package proxy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file is an AWS Signature Version 4 signer for HTTP headers
// (AWS4-HMAC-SHA256): the canonical request, the string to sign and the
// derived signing key, as AWS documents them in "Create a signed AWS API
// request".

// The algorithms of the Authorization header.
const (
	sigV4Algorithm  = "AWS4-HMAC-SHA256"
	sigV4AAlgorithm = "AWS4-ECDSA-P256-SHA256"
	amzDateFormat   = "20060102T150405Z"
	// unsignedPayload is the payload hash of a request whose body is not
	// signed.
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// streamingPrefix starts the payload hash of an aws-chunked body.
	streamingPrefix = "STREAMING-"
	// streamingUnsignedTrailer is the one aws-chunked shape whose chunks
	// carry no signature: only the headers are signed, as with
	// UNSIGNED-PAYLOAD, so it can be re-signed.
	streamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

// An authorization is a parsed SigV4 Authorization header:
//
//	AWS4-HMAC-SHA256 Credential=KEYID/DATE/REGION/SERVICE/aws4_request, SignedHeaders=host;x-amz-date, Signature=HEX
type authorization struct {
	Algorithm string
	KeyID     string
	// Scope is the credential after the key id: date/region/service/
	// aws4_request (SigV4a: date/service/aws4_request).
	Scope         string
	SignedHeaders []string
	Signature     string
}

// parseAuthorization parses v. It fails unless v is one of the two
// algorithms followed by Credential, SignedHeaders and Signature, in any
// order, separated by commas and optional spaces, each exactly once.
func parseAuthorization(v string) (authorization, error) {
	var a authorization
	alg, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || (alg != sigV4Algorithm && alg != sigV4AAlgorithm) {
		return a, errors.New("not an AWS4-HMAC-SHA256 or AWS4-ECDSA-P256-SHA256 authorization")
	}
	a.Algorithm = alg
	seen := map[string]bool{}
	for _, part := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || seen[k] || val == "" {
			return a, fmt.Errorf("malformed component %q", part)
		}
		seen[k] = true
		switch k {
		case "Credential":
			id, scope, ok := strings.Cut(val, "/")
			if !ok || id == "" || scope == "" {
				return a, errors.New("the Credential field is not KEYID/SCOPE")
			}
			a.KeyID, a.Scope = id, scope
		case "SignedHeaders":
			a.SignedHeaders = strings.Split(val, ";")
			for _, h := range a.SignedHeaders {
				if h == "" || h != strings.ToLower(h) || strings.ContainsAny(h, " \t") {
					return a, fmt.Errorf("SignedHeaders has a bad name %q", h)
				}
			}
		case "Signature":
			a.Signature = val
		default:
			return a, fmt.Errorf("unknown component %q", k)
		}
	}
	if a.KeyID == "" || a.SignedHeaders == nil || a.Signature == "" {
		return a, errors.New("the Credential, SignedHeaders and Signature fields are all required")
	}
	return a, nil
}

// String formats a as an Authorization header value.
func (a authorization) String() string {
	return a.Algorithm + " Credential=" + a.KeyID + "/" + a.Scope + ", SignedHeaders=" + strings.Join(a.SignedHeaders, ";") + ", Signature=" + a.Signature
}

// A sigV4Scope is the credential scope of AWS4-HMAC-SHA256.
type sigV4Scope struct{ Date, Region, Service string }

func parseScope(s string) (sigV4Scope, error) {
	p := strings.Split(s, "/")
	if len(p) != 4 || p[3] != "aws4_request" || len(p[0]) != 8 || p[1] == "" || p[2] == "" {
		return sigV4Scope{}, fmt.Errorf("credential scope %q is not DATE/REGION/SERVICE/aws4_request", s)
	}
	if _, err := time.Parse("20060102", p[0]); err != nil {
		return sigV4Scope{}, fmt.Errorf("credential scope %q: bad date", s)
	}
	return sigV4Scope{p[0], p[1], p[2]}, nil
}

// signV4 returns the hex signature of r with secret over the signed
// headers, at amzDate, in scope, for the payload hash given. r is read as
// it will be sent: r.Host (else r.URL.Host) is the host header, and
// r.ContentLength the content-length header when r.Header has none.
func signV4(r *http.Request, secret, amzDate string, scope sigV4Scope, signed []string, payloadHash string) string {
	creq := canonicalRequest(r, scope.Service, signed, payloadHash)
	sum := sha256.Sum256([]byte(creq))
	scopeStr := scope.Date + "/" + scope.Region + "/" + scope.Service + "/aws4_request"
	toSign := sigV4Algorithm + "\n" + amzDate + "\n" + scopeStr + "\n" + hex.EncodeToString(sum[:])
	key := hmacSHA256([]byte("AWS4"+secret), scope.Date)
	key = hmacSHA256(key, scope.Region)
	key = hmacSHA256(key, scope.Service)
	key = hmacSHA256(key, "aws4_request")
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

// canonicalRequest is the SigV4 canonical request of r.
func canonicalRequest(r *http.Request, service string, signed []string, payloadHash string) string {
	var b strings.Builder
	b.WriteString(r.Method)
	b.WriteByte('\n')
	b.WriteString(canonicalURI(r.URL, service))
	b.WriteByte('\n')
	b.WriteString(canonicalQuery(r.URL.RawQuery))
	b.WriteByte('\n')
	for _, name := range signed {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(canonicalHeaderValue(r, name))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	b.WriteString(strings.Join(signed, ";"))
	b.WriteByte('\n')
	b.WriteString(payloadHash)
	return b.String()
}

// canonicalURI is the path as it goes on the wire. S3 signs it as is;
// every other service signs it escaped once more (AWS: "each path
// segment must be URI-encoded twice, except for Amazon S3").
func canonicalURI(u *url.URL, service string) string {
	p := u.Opaque
	if p == "" {
		p = u.EscapedPath()
	}
	if p == "" {
		p = "/"
	}
	if service != "s3" {
		p = awsEscape(p, true)
	}
	return p
}

// canonicalQuery sorts the query's parameters by name, then value, and
// escapes both. "+" reads as a space, and a parameter that does not
// unescape is left out, as url.ParseQuery does.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type kv struct{ k, v string }
	var params []kv
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, err1 := url.QueryUnescape(k)
		v, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			continue
		}
		params = append(params, kv{k, v})
	}
	sort.SliceStable(params, func(i, j int) bool {
		if params[i].k != params[j].k {
			return params[i].k < params[j].k
		}
		return params[i].v < params[j].v
	})
	var b strings.Builder
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(awsEscape(p.k, false))
		b.WriteByte('=')
		b.WriteString(awsEscape(p.v, false))
	}
	return b.String()
}

// awsEscape percent-encodes every byte but the unreserved characters of
// RFC 3986 (A-Z a-z 0-9 - . _ ~), and "/" when keepSlash.
func awsEscape(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~', c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// canonicalHeaderValue is the value of the header name (lower case) as
// r will send it: its values trimmed, inner runs of spaces made one, and
// joined by commas.
func canonicalHeaderValue(r *http.Request, name string) string {
	var vs []string
	switch name {
	case "host":
		h := r.Host
		if h == "" {
			h = r.URL.Host
		}
		vs = []string{h}
	case "content-length":
		vs = r.Header.Values("Content-Length")
		if len(vs) == 0 && r.ContentLength > 0 {
			vs = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	default:
		vs = r.Header.Values(name)
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = collapseSpaces(v)
	}
	return strings.Join(out, ",")
}

// collapseSpaces trims the spaces around v and makes each run of spaces
// inside it one.
func collapseSpaces(v string) string {
	v = strings.Trim(v, " ")
	if !strings.Contains(v, "  ") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' && i > 0 && v[i-1] == ' ' {
			continue
		}
		b.WriteByte(v[i])
	}
	return b.String()
}
