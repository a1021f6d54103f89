package decider

import (
	"encoding/json"
	"slices"
	"strings"
)

// Proto is the protocol version this package speaks.
const Proto = 1

// Actions of a verdict.
const (
	ActionAllow    = "allow"
	ActionDeny     = "deny"
	ActionNeedBody = "need_body"
)

// Hello is the decider's answer to the proxy's hello: the hosts it wants
// to be asked about. A request to a host that AllowedDomains does not
// match, or that DeniedDomains matches, is refused without asking. The
// entries follow the allowedDomains and deniedDomains grammar of the
// settings file (ValidEntry). The tags name the members for ParseHello;
// MarshalJSON writes both lists, an empty one too.
type Hello struct {
	AllowedDomains []string `json:"allowedDomains"`
	DeniedDomains  []string `json:"deniedDomains" decider:"optional"`
}

// MarshalJSON writes the decider's hello frame, with both lists (an
// empty one as []), as the protocol shows it.
func (h Hello) MarshalJSON() ([]byte, error) {
	type wire struct {
		T       string   `json:"t"`
		Proto   int      `json:"proto"`
		Allowed []string `json:"allowedDomains"`
		Denied  []string `json:"deniedDomains"`
	}
	allowed, denied := h.AllowedDomains, h.DeniedDomains
	if allowed == nil {
		allowed = []string{}
	}
	if denied == nil {
		denied = []string{}
	}
	return json.Marshal(wire{"hello", Proto, allowed, denied})
}

// ProxyHello is the proxy's first frame.
var ProxyHello = []byte(`{"t":"hello","proto":1}`)

// ParseHello parses the decider's hello: proto 1, allowedDomains
// (required) and deniedDomains (may be left out); either list may be
// empty, as the protocol shows both lists in the hello and an empty list
// is a list (a decider written for the reference sends
// "deniedDomains":[]).
func ParseHello(b []byte) (Hello, error) {
	m, err := helloShape.read(b)
	if err != nil {
		return Hello{}, err
	}
	var proto int
	var h Hello
	if err := field(m, "proto", &proto); err != nil {
		return Hello{}, err
	}
	if proto != Proto {
		return Hello{}, violation("proto %d is not supported (this proxy speaks %d)", proto, Proto)
	}
	if err := helloShape.decode(m, &h); err != nil {
		return Hello{}, err
	}
	for i, e := range h.AllowedDomains {
		if err := ValidEntry(e, false); err != nil {
			return Hello{}, violation("allowedDomains[%d] %q: %v", i, e, err)
		}
	}
	for i, e := range h.DeniedDomains {
		if err := ValidEntry(e, true); err != nil {
			return Hello{}, violation("deniedDomains[%d] %q: %v", i, e, err)
		}
	}
	return h, nil
}

func wantType(m map[string]json.RawMessage, t string) error {
	var got string
	if err := field(m, "t", &got); err != nil {
		return err
	}
	if got != t {
		return violation("a %q frame where %q was expected", got, t)
	}
	return nil
}

// Req is one request the proxy asks about. Host is canonical; Path and
// Query are as the client spelled them; HostHeader, SNI, Query and Headers
// are left out of the frame when empty. SNI is set only inside a
// terminated tunnel. Headers are keyed by lower-case name, without Host
// and the hop-by-hop headers.
type Req struct {
	ID         uint64              `json:"id"`
	Method     string              `json:"method"`
	Host       string              `json:"host"`
	Port       int                 `json:"port"`
	HostHeader string              `json:"hostHeader,omitempty"`
	SNI        string              `json:"sni,omitempty"`
	Path       string              `json:"path"`
	Query      string              `json:"query,omitempty"`
	Headers    map[string][]string `json:"headers,omitempty"`
}

// MarshalJSON writes the req frame.
func (r Req) MarshalJSON() ([]byte, error) {
	type plain Req
	type wire struct {
		T string `json:"t"`
		plain
	}
	return json.Marshal(wire{"req", plain(r)})
}

// ParseReq parses a req frame, for deciders written in Go.
func ParseReq(b []byte) (Req, error) {
	m, err := reqShape.read(b)
	if err != nil {
		return Req{}, err
	}
	var r Req
	if err := reqShape.decode(m, &r); err != nil {
		return Req{}, err
	}
	return r, nil
}

// Body is the request body a need_body verdict asked for: at most the
// verdict's max bytes; Cut says the body was longer.
type Body struct {
	ID   uint64 `json:"id"`
	Data []byte `json:"data"`
	Cut  bool   `json:"cut,omitempty"`
}

// MarshalJSON writes the body frame (data in standard base64).
func (b Body) MarshalJSON() ([]byte, error) {
	type plain Body
	type wire struct {
		T string `json:"t"`
		plain
	}
	return json.Marshal(wire{"body", plain(b)})
}

// ParseBody parses a body frame, for deciders written in Go.
func ParseBody(b []byte) (Body, error) {
	m, err := bodyShape.read(b)
	if err != nil {
		return Body{}, err
	}
	var body Body
	if err := bodyShape.decode(m, &body); err != nil {
		return Body{}, err
	}
	return body, nil
}

// A Verdict answers a req (or the body a need_body verdict asked for).
//
// allow may edit the request: SetHeaders replaces headers (name → its
// values: on the wire a string, or a non-empty list of strings, the shape
// of a req's headers), RemoveHeaders drops them, and Cred with
// Credential places a credential (after removing the client's
// authorization, proxy-authorization, cookie and x-api-key). deny
// answers the client with Status (400-599) and Reason. need_body asks
// for up to Max bytes of the body, once per request. A field tagged
// action goes with that action alone.
type Verdict struct {
	ID            uint64              `json:"id"`
	Action        string              `json:"action"`
	SetHeaders    map[string][]string `json:"setHeaders,omitempty" action:"allow"`
	RemoveHeaders []string            `json:"removeHeaders,omitempty" action:"allow"`
	Cred          string              `json:"cred,omitempty" action:"allow"`
	Credential    string              `json:"credential,omitempty" action:"allow"`
	Status        int                 `json:"status,omitempty" action:"deny"`
	Reason        string              `json:"reason,omitempty" action:"deny"`
	Max           int                 `json:"max,omitempty" action:"need_body"`
}

// MarshalJSON writes the verdict frame; a header with one value is
// written as a string.
func (v Verdict) MarshalJSON() ([]byte, error) {
	type plain Verdict
	type wire struct {
		T string `json:"t"`
		plain
		SetHeaders map[string]any `json:"setHeaders,omitempty"`
	}
	w := wire{T: "verdict", plain: plain(v)}
	w.plain.SetHeaders = nil
	if len(v.SetHeaders) > 0 {
		w.SetHeaders = make(map[string]any, len(v.SetHeaders))
		for name, values := range v.SetHeaders {
			if len(values) == 1 {
				w.SetHeaders[name] = values[0]
			} else {
				w.SetHeaders[name] = values
			}
		}
	}
	return json.Marshal(w)
}

// headerValues decodes setHeaders: each value a string, or a non-empty
// list of strings.
func headerValues(raw json.RawMessage) (map[string][]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, violation(`"setHeaders" must be an object of header names`)
	}
	out := make(map[string][]string, len(m))
	for name, v := range m {
		var one string
		if err := json.Unmarshal(v, &one); err == nil {
			out[name] = []string{one}
			continue
		}
		var list []string
		if err := json.Unmarshal(v, &list); err != nil {
			return nil, violation("setHeaders %q: the value must be a string or a list of strings", name)
		}
		if len(list) == 0 {
			return nil, violation("setHeaders %q: the list of values is empty (name the header in removeHeaders to remove it)", name)
		}
		out[name] = list
	}
	return out, nil
}

// ParseVerdict parses and checks a verdict frame.
func ParseVerdict(b []byte) (Verdict, error) {
	m, err := verdictShape.read(b)
	if err != nil {
		return Verdict{}, err
	}
	var v Verdict
	// setHeaders is written as a string or a list of strings per header.
	if raw, ok := m["setHeaders"]; ok {
		if v.SetHeaders, err = headerValues(raw); err != nil {
			return Verdict{}, err
		}
	}
	if err := verdictShape.decode(m, &v, "setHeaders"); err != nil {
		return Verdict{}, err
	}
	if !slices.Contains(actions, v.Action) {
		return Verdict{}, violation("action %q is not allow, deny or need_body", v.Action)
	}
	for k := range m {
		if a := verdictShape.action(k); a != "" && a != v.Action {
			return Verdict{}, violation("%q does not go with action %q", k, v.Action)
		}
	}
	if v.ID == 0 {
		return Verdict{}, violation("id 0 (ids start at 1)")
	}
	return v, v.check(m)
}

func (v Verdict) check(m map[string]json.RawMessage) error {
	present := func(k string) bool { _, ok := m[k]; return ok }
	switch v.Action {
	case ActionAllow:
		if present("setHeaders") && len(v.SetHeaders) == 0 {
			return violation(`"setHeaders" is empty (leave it out)`)
		}
		for name, values := range v.SetHeaders {
			if err := editableHeader(name); err != nil {
				return violation("setHeaders %q: %v", name, err)
			}
			for _, value := range values {
				if !textOK(value) {
					return violation("setHeaders %q: the value holds a control character", name)
				}
			}
		}
		if present("removeHeaders") && len(v.RemoveHeaders) == 0 {
			return violation(`"removeHeaders" is empty (leave it out)`)
		}
		for _, name := range v.RemoveHeaders {
			if err := editableHeader(name); err != nil {
				return violation("removeHeaders %q: %v", name, err)
			}
		}
		if present("cred") != present("credential") {
			return violation(`"cred" and "credential" go together`)
		}
		if present("cred") && (!token(v.Cred) || v.Credential == "" || !textOK(v.Credential)) {
			return violation(`"cred" must be a lower-case token and "credential" a non-empty value without control characters`)
		}
	case ActionDeny:
		if !present("status") || v.Status < 400 || v.Status > 599 {
			return violation("deny needs a status of 400-599")
		}
		if present("reason") && (v.Reason == "" || !textOK(v.Reason)) {
			return violation(`"reason" must be non-empty text without control characters (tab allowed)`)
		}
	case ActionNeedBody:
		if v.Max < 1 || v.Max > MaxBody {
			return violation("need_body max must be 1-%d", MaxBody)
		}
	}
	return nil
}

// editableHeader refuses what a decider may not name: anything but a
// lower-case token, and the headers that frame the message or route it.
func editableHeader(name string) error {
	if !token(name) {
		return violation("not a lower-case header name")
	}
	switch name {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "te", "trailer",
		"upgrade", "proxy-connection", "proxy-authenticate", "proxy-authorization":
		return violation("the proxy owns this header")
	}
	return nil
}

// token reports whether s is a non-empty lower-case HTTP token.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// textOK reports whether s has no control character but tab.
func textOK(s string) bool {
	for _, r := range s {
		if r < 0x20 && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return false
		}
	}
	return true
}
