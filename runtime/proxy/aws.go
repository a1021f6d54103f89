package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// An AWSKey is a masked AWS credential: the command holds sentinels for
// its key id, secret and session token, and signs its requests with them.
// The proxy re-signs those requests with the real secret on their way to
// the hosts Inject accepts (see Injector.request).
type AWSKey struct {
	// Name names the pair's variables, for messages; never a value.
	Name string
	// KeyIDVar is the access key id's variable, for messages.
	KeyIDVar   string
	SentinelID string
	RealID     string
	// Secret is the real secret access key. Its sentinel is never needed:
	// a signature shows the key id, not the secret.
	Secret string
	// SentinelToken and RealToken are the session token's ("" without
	// one).
	SentinelToken string
	RealToken     string
	// Inject reports whether host (canonical, without port) may receive
	// requests signed with the real secret.
	Inject func(host string) bool
}

// SigV4Policy says which of the shapes the proxy cannot re-sign are
// forwarded as the command signed them (true) instead of refused.
type SigV4Policy struct {
	Streaming bool // aws-chunked uploads with signed chunks
	Presigned bool // X-Amz-Signature in the query
	SigV4A    bool // AWS4-ECDSA-P256-SHA256
}

// maxResignBody bounds the body the proxy reads to hash when the request
// has no x-amz-content-sha256 header; a larger one is refused.
const maxResignBody = 64 << 20

// A sigV4Shape is what a request signed with a masked key looks like.
type sigV4Shape int

const (
	shapeHeader    sigV4Shape = iota // re-signable Authorization header
	shapeStreaming                   // STREAMING-… payload with signed chunks
	shapePresigned                   // signature in the query
	shapeSigV4A                      // ECDSA
	shapeMalformed                   // names the key, does not parse
)

// refusal is the 403 body for a shape that cannot be re-signed.
func (k *AWSKey) refusal(shape sigV4Shape, detail string) string {
	const tail = "; set credentials.sigv4.%s to \"passthrough\" to forward it as signed (the service will then reject the stand-in key), or sign it outside the sandbox"
	lead := fmt.Sprintf("srt cannot re-sign this AWS request, which is signed with the sandbox's stand-in for %s: ", k.KeyIDVar)
	switch shape {
	case shapeStreaming:
		return lead + "it is a streaming upload (x-amz-content-sha256: " + detail + ") whose every chunk is signed" + fmt.Sprintf(tail, "streaming") + " (an SDK signs whole bodies when told to, e.g. with an unsigned or precomputed payload)\n"
	case shapePresigned:
		return lead + "it is a presigned URL (X-Amz-Signature in the query)" + fmt.Sprintf(tail, "presigned") + "\n"
	case shapeSigV4A:
		return lead + "it is signed with SigV4a (AWS4-ECDSA-P256-SHA256)" + fmt.Sprintf(tail, "sigv4a") + " (or use a regional endpoint with SigV4)\n"
	}
	return lead + detail + "\n"
}

// passes reports whether the policy forwards shape as signed.
func (p SigV4Policy) passes(shape sigV4Shape) bool {
	switch shape {
	case shapeStreaming:
		return p.Streaming
	case shapePresigned:
		return p.Presigned
	case shapeSigV4A:
		return p.SigV4A
	}
	return false
}

func (in *Injector) policy() SigV4Policy {
	if in.SigV4 == nil {
		return SigV4Policy{}
	}
	return in.SigV4()
}

// awsKey is the key whose sentinel key id is id, or nil.
func (in *Injector) awsKey(id string) *AWSKey {
	for i := range in.AWS {
		if k := &in.AWS[i]; k.SentinelID != "" && k.SentinelID == id {
			return k
		}
	}
	return nil
}

// classify finds the masked key r is signed with, if any, and its shape.
func (in *Injector) classify(r *http.Request) (*AWSKey, sigV4Shape, string) {
	if len(in.AWS) == 0 {
		return nil, 0, ""
	}
	if strings.Contains(r.URL.RawQuery, "X-Amz-") {
		q, _ := url.ParseQuery(r.URL.RawQuery)
		id, _, _ := strings.Cut(q.Get("X-Amz-Credential"), "/")
		if k := in.awsKey(id); k != nil {
			if q.Get("X-Amz-Algorithm") == sigV4AAlgorithm {
				return k, shapeSigV4A, ""
			}
			return k, shapePresigned, ""
		}
	}
	auths := r.Header.Values("Authorization")
	for _, v := range auths {
		k := in.awsKey(credentialKeyID(v))
		if k == nil {
			continue
		}
		if len(auths) > 1 {
			return k, shapeMalformed, "the request has more than one Authorization header"
		}
		a, err := parseAuthorization(v)
		switch {
		case err != nil:
			return k, shapeMalformed, "its Authorization header does not parse: " + err.Error()
		case a.Algorithm == sigV4AAlgorithm:
			return k, shapeSigV4A, ""
		}
		if h := r.Header.Get("X-Amz-Content-Sha256"); strings.HasPrefix(h, streamingPrefix) && h != streamingUnsignedTrailer {
			return k, shapeStreaming, h
		}
		return k, shapeHeader, ""
	}
	return nil, 0, ""
}

// hostOnly is the host of a Host header value, without port or IPv6
// brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// hashBody is the hex SHA-256 of b, a payload hash.
func hashBody(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// credentialKeyID is the key id of an Authorization value's Credential
// component, found even when the rest does not parse.
func credentialKeyID(v string) string {
	if !strings.HasPrefix(strings.TrimSpace(v), "AWS4-") {
		return ""
	}
	_, c, ok := strings.Cut(v, "Credential=")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(c, "/")
	return id
}

// request readies r, going to host, for the upstream. A request to a
// host whose responses are read whole asks for one that can be
// (askReadable). With swap unset (plain HTTP without
// allowPlaintextInject) nothing more is done. A request signed with a
// masked AWS key is re-signed with the real secret when host is one of
// the key's inject hosts; a shape that cannot be re-signed is refused,
// or forwarded untouched when the policy says passthrough; the same
// request to any other host is forwarded untouched. Every other request
// gets the real values swapped in where they may go (swapRequest), and
// each stand-in left where none may go is told to left. The caller has
// checked that r names host (terminated.ServeHTTP). It returns the body
// of a 403 when r must not go, and a note for the debug log.
func (in *Injector) request(r *http.Request, host string, swap bool, left func(leftStandIn)) (refusal, note string) {
	if in == nil {
		return "", ""
	}
	if in.readsAll(host) {
		askReadable(r.Header)
	}
	if !swap {
		return "", ""
	}
	k, shape, detail := in.classify(r)
	switch {
	case k == nil:
		swapRequest(r, in.swaps(host), left)
		return "", ""
	case k.Inject == nil || !k.Inject(host):
		return "", "signed with the stand-in key of " + k.Name + " to a host outside its inject hosts: forwarded as signed"
	case shape == shapeHeader:
		// The signature is made for the host the request reaches, never
		// for another one its Host header names.
		if h := hostOnly(r.Host); h != "" && !strings.EqualFold(strings.TrimSuffix(h, "."), host) {
			msg := fmt.Sprintf("its Host header names %q, not %s, where it goes", h, host)
			return k.refusal(shapeMalformed, msg), "not re-signed: " + msg
		}
		if msg := in.resign(r, host, k, left); msg != "" {
			return k.refusal(shapeMalformed, msg), "not re-signed: " + msg
		}
		return "", "re-signed for " + k.Name
	case shape != shapeMalformed && in.policy().passes(shape):
		return "", "cannot be re-signed, forwarded as signed (passthrough)"
	}
	return k.refusal(shape, detail), "refused: cannot be re-signed"
}

// resign replaces r's signature with one made with k's real secret: the
// real key id, the client's scope, signed headers and X-Amz-Date. The
// headers get the usual sentinel swap first (the session token above
// all; swapHeaders), so that the signature covers what is sent; the body
// is sent as the command wrote it, since its hash may be signed (a
// stand-in in it is told to left). The request asks for an unencoded
// response (askIdentity) before it is signed; a header request() removed
// (askReadable) is no longer signed. It returns why it could not.
func (in *Injector) resign(r *http.Request, host string, k *AWSKey, left func(leftStandIn)) string {
	a, _ := parseAuthorization(r.Header.Get("Authorization"))
	scope, err := parseScope(a.Scope)
	if err != nil {
		return "its " + err.Error()
	}
	date := r.Header.Get("X-Amz-Date")
	if _, err := time.Parse(amzDateFormat, date); err != nil {
		return "it has no X-Amz-Date header of the form 20060102T150405Z, which its signature needs"
	}
	sw := in.swaps(host)
	swapHeaders(r.Header, sw, left)
	askIdentity(r.Header)
	a.SignedHeaders = slices.DeleteFunc(a.SignedHeaders, func(name string) bool {
		return unreadable[name] && len(r.Header.Values(name)) == 0
	})
	if k.SentinelToken != "" {
		for i, v := range r.Header.Values("X-Amz-Security-Token") {
			if v == k.SentinelToken {
				r.Header["X-Amz-Security-Token"][i] = k.RealToken
			}
		}
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		var body []byte
		if r.Body != nil && r.Body != http.NoBody {
			var err error
			body, err = io.ReadAll(io.LimitReader(r.Body, maxResignBody+1))
			if err != nil {
				return "its body could not be read: " + err.Error()
			}
			if len(body) > maxResignBody {
				return "its body is larger than 64 MiB and has no x-amz-content-sha256 header, so srt would have to hold all of it to hash it; send x-amz-content-sha256 (a hash or UNSIGNED-PAYLOAD)"
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		payload = hashBody(body)
	}
	a.KeyID = k.RealID
	a.Signature = signV4(r, k.Secret, date, scope, a.SignedHeaders, payload)
	r.Header.Set("Authorization", a.String())
	bodySwap(r, sw, false, inSignedBody, left)
	return ""
}

// prepare readies a request to the tunnel's (or absolute-form target's)
// host for the upstream (Injector.request), swapping real values in
// only when swap is set, logging what it did with a signed request, and
// recording each stand-in it left in place (leftEvent). It returns the
// body of a refusal, or "".
func (e *Egress) prepare(r *http.Request, to tunnelOf, swap bool) string {
	refused, note := e.Inject.request(r, to.host, swap, func(l leftStandIn) { e.leftEvent(to, l) })
	if note != "" {
		e.debug("sigv4", "host", to.host, "method", r.Method, "path", r.URL.Path, "what", note)
	}
	return refused
}

// refuseSigV4 answers a request the proxy will not sign.
func refuseSigV4(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Proxy-Error", "sigv4-not-resignable")
	w.WriteHeader(http.StatusForbidden)
	io.WriteString(w, body)
}
