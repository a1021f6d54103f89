package proxy

import (
	"net/http"
	"strings"
)

// A Secret is one masked credential: the command holds Sentinel, and the
// proxy sends Real in its place to the hosts Inject accepts.
type Secret struct {
	Name     string // for messages; never the value
	Sentinel string
	Real     string
	// Inject reports whether host (canonical, without port) may receive
	// the real value.
	Inject func(host string) bool
}

// Injector swaps masked credentials on their way out and back.
type Injector struct {
	Secrets []Secret
	// Plaintext allows swapping into plain HTTP requests (the real value
	// then crosses the network unencrypted).
	Plaintext bool
	// AWS are the masked AWS credentials whose SigV4 requests are
	// re-signed (aws.go).
	AWS []AWSKey
	// SigV4 returns the policy for the SigV4 shapes that cannot be
	// re-signed; it is called once per request, so a new policy applies
	// to the next one. nil refuses them all.
	SigV4 func() SigV4Policy
}

// outbound returns the sentinel→real substitutions for a request to host.
func (in *Injector) outbound(host string) []pair {
	if in == nil {
		return nil
	}
	var out []pair
	for _, s := range in.Secrets {
		if s.Sentinel != "" && s.Real != "" && s.Inject != nil && s.Inject(host) {
			out = append(out, pair{[]byte(s.Sentinel), []byte(s.Real)})
		}
	}
	return out
}

// inbound returns the real→sentinel substitutions for every response: an
// upstream that echoes a real value must not hand it to the command.
func (in *Injector) inbound() []pair {
	if in == nil {
		return nil
	}
	var out []pair
	for _, s := range in.Secrets {
		if s.Sentinel != "" && s.Real != "" {
			out = append(out, pair{[]byte(s.Real), []byte(s.Sentinel)})
		}
	}
	return out
}

// encoded reports whether a body is Content-Encoded (compressed): its
// bytes are not the text a sentinel would appear in, so it is left alone.
func encoded(h http.Header) bool {
	for _, v := range h.Values("Content-Encoding") {
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "identity") {
				return true
			}
		}
	}
	return false
}

// swapRequest applies pairs to a request's headers and, unless it is
// Content-Encoded, to its streamed body.
func swapRequest(r *http.Request, pairs []pair) {
	if len(pairs) == 0 {
		return
	}
	swapHeader(r.Header, pairs)
	if r.Body == nil || r.Body == http.NoBody || encoded(r.Header) {
		return
	}
	r.Body = newSwapReader(r.Body, pairs)
	if !sameLengths(pairs) {
		r.ContentLength = -1
		r.Header.Del("Content-Length")
	}
}

// swapResponse applies pairs to a response's headers and body likewise.
func swapResponse(resp *http.Response, pairs []pair) {
	if len(pairs) == 0 {
		return
	}
	swapHeader(resp.Header, pairs)
	if resp.Body == nil || encoded(resp.Header) {
		return
	}
	resp.Body = newSwapReader(resp.Body, pairs)
	if !sameLengths(pairs) {
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
}
