package proxy

import (
	"net/http"
	"strings"
	"sync"
)

// A Secret is one masked credential: the command holds Sentinel, and the
// proxy sends Real in its place to the hosts Inject accepts, in the
// header fields that carry credentials (carriesCredential), and
// elsewhere in the request but its URL only to the hosts BodyInject
// accepts.
type Secret struct {
	Name string // for messages; never the value
	// Setting is the JSON path of the settings entry that masks it
	// (credentials.envVars[0]), for messages; "" when none.
	Setting  string
	Sentinel string
	Real     string
	// Inject reports whether host (canonical, without port) may receive
	// the real value.
	Inject func(host string) bool
	// BodyInject reports whether host, one Inject accepts, may also
	// receive the real value where it may keep it: in the request body
	// and in the header fields that carry no credential
	// (bodyInjectHosts). nil means no host; a non-nil BodyInject makes
	// every response read whole (Injector.readsAll).
	BodyInject func(host string) bool
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

	// cache holds inbound's answers for the Secrets they were made
	// from: [0] plain, [1] with the encoded forms.
	mu    sync.Mutex
	cache [2]*scrubSet
}

// A scrubSet is what a response is scrubbed with: the real→stand-in
// pairs, and their matcher (nil when nextMatch serves better).
type scrubSet struct {
	pairs []pair
	mt    *matcher
	n     int // len(Secrets) when it was made
}

// A swap is one secret that may go to a request's host: its pair
// (sentinel→real), and whether it may go anywhere in the request but the
// URL, or only into the header fields that carry credentials.
type swap struct {
	pair
	s        *Secret
	anywhere bool
}

// swaps returns the secrets that may go to host.
func (in *Injector) swaps(host string) []swap {
	if in == nil {
		return nil
	}
	var out []swap
	for i := range in.Secrets {
		s := &in.Secrets[i]
		if s.Sentinel != "" && s.Real != "" && s.Inject != nil && s.Inject(host) {
			anywhere := s.BodyInject != nil && s.BodyInject(host)
			out = append(out, swap{pair{[]byte(s.Sentinel), []byte(s.Real)}, s, anywhere})
		}
	}
	return out
}

// inbound returns the real→sentinel substitutions for a response: an
// upstream that echoes a real value must not hand it to the command.
// With every, the real values' re-encoded forms too (encodedForms), for
// a response read whole (Injector.readsAll).
func (in *Injector) inbound(every bool) []pair {
	return in.scrubbing(every).pairs
}

// scrubbing is inbound's pairs with their matcher, made once for the
// secrets there are.
func (in *Injector) scrubbing(every bool) *scrubSet {
	if in == nil {
		return &scrubSet{}
	}
	c := 0
	if every {
		c = 1
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if set := in.cache[c]; set != nil && set.n == len(in.Secrets) {
		return set
	}
	var pairs, forms []pair
	for _, s := range in.Secrets {
		if s.Sentinel != "" && s.Real != "" {
			pairs = append(pairs, pair{[]byte(s.Real), []byte(s.Sentinel)})
			if every {
				forms = append(forms, encodedForms([]byte(s.Real), []byte(s.Sentinel))...)
			}
		}
	}
	// The values themselves first: on a tie at one position the first
	// pair wins.
	pairs = append(pairs, forms...)
	set := &scrubSet{pairs: pairs, mt: newMatcher(pairs), n: len(in.Secrets)}
	in.cache[c] = set
	return set
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

// Where a stand-in was left in a request (a leftStandIn's place).
const (
	inBody       = "body"        // the body, without bodyInjectHosts
	inHeader     = "header"      // a header field that carries no credential, likewise
	inURL        = "url"         // the request target, never swapped
	inSignedBody = "signed-body" // the body of a request re-signed with SigV4
)

// A leftStandIn is a stand-in the proxy met in a request to one of its
// secret's inject hosts where it does not swap the real value in: the
// request goes with the stand-in there, and the run records it
// (Egress.prepare).
type leftStandIn struct {
	s      *Secret
	place  string // inBody, inHeader, inURL, inSignedBody
	header string // the header field, for inHeader
}

// swapRequest swaps the real values of sw into r where each may go: into
// the header fields that carry credentials, and, for a swap that may go
// anywhere, into every header field and the streamed body unless it is
// Content-Encoded. Every stand-in left in a header field, the body or
// the URL is told to left, once per secret and place; the body is
// watched as it streams, never held.
func swapRequest(r *http.Request, sw []swap, left func(leftStandIn)) {
	if len(sw) == 0 {
		return
	}
	swapHeaders(r.Header, sw, left)
	target := r.URL.RequestURI()
	for _, x := range sw {
		if strings.Contains(target, x.s.Sentinel) {
			left(leftStandIn{s: x.s, place: inURL})
		}
	}
	bodySwap(r, sw, true, inBody, left)
}

// bodySwap streams r's body through sw unless it is Content-Encoded:
// with anywhere set, the swaps that may go anywhere are made; every
// other stand-in is only found, and told to left (at place), once per
// secret. The body is never held whole.
func bodySwap(r *http.Request, sw []swap, anywhere bool, place string, left func(leftStandIn)) {
	if len(sw) == 0 || r.Body == nil || r.Body == http.NoBody || encoded(r.Header) {
		return
	}
	pairs := make([]pair, len(sw))
	swapped := make([]bool, len(sw))
	for i, x := range sw {
		pairs[i] = x.pair
		swapped[i] = anywhere && x.anywhere
		if !swapped[i] {
			pairs[i].New = x.Old // found, not swapped
		}
	}
	told := make([]bool, len(sw))
	r.Body = newFindingReader(r.Body, pairs, func(k int) {
		if !swapped[k] && !told[k] {
			told[k] = true
			left(leftStandIn{s: sw[k].s, place: place})
		}
	})
	if !sameLengths(pairs) {
		r.ContentLength = -1
		r.Header.Del("Content-Length")
	}
}

// swapHeaders swaps sw into h: each swap into the fields that carry
// credentials, the swaps that may go anywhere into every field. A
// stand-in left in a field is told to left, once per secret and field.
func swapHeaders(h http.Header, sw []swap, left func(leftStandIn)) {
	var all, anywhere []pair
	for _, x := range sw {
		all = append(all, x.pair)
		if x.anywhere {
			anywhere = append(anywhere, x.pair)
		}
	}
	for name, vs := range h {
		pairs := anywhere
		if carriesCredential(name) {
			pairs = all
		}
		swapValues(vs, pairs)
		if len(pairs) == len(all) {
			continue
		}
		for _, x := range sw {
			if x.anywhere {
				continue
			}
			for _, v := range vs {
				if strings.Contains(v, x.s.Sentinel) {
					left(leftStandIn{s: x.s, place: inHeader, header: name})
					break
				}
			}
		}
	}
}

// swapResponse applies set to a response's headers and body.
func swapResponse(resp *http.Response, set *scrubSet) {
	pairs := set.pairs
	if len(pairs) == 0 {
		return
	}
	swapHeader(resp.Header, pairs)
	if resp.Body == nil || encoded(resp.Header) {
		return
	}
	resp.Body = newMatchingReader(resp.Body, pairs, set.mt)
	if !sameLengths(pairs) {
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
}
