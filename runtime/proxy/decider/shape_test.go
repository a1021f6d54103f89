package decider

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestEveryFieldParsed: every field of a message struct is a member its
// parser reads: the frame written from values that set every field
// parses back into the same values. A field added to a struct must be
// set here too, and the test then shows the parser knows it.
func TestEveryFieldParsed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []any // together they set every field of their struct
		parse  func([]byte) (any, error)
	}{
		{"Hello", []any{
			Hello{AllowedDomains: []string{"example.com"}, DeniedDomains: []string{"*.evil.test"}},
		}, func(b []byte) (any, error) { return ParseHello(b) }},
		{"Req", []any{
			Req{ID: 1, Method: "POST", Host: "example.com", Port: 443, HostHeader: "example.com", SNI: "example.com",
				Path: "/p", Query: "q=1", Headers: map[string][]string{"x-a": {"1", "2"}}},
		}, func(b []byte) (any, error) { return ParseReq(b) }},
		{"Body", []any{
			Body{ID: 2, Data: []byte("hi"), Cut: true},
		}, func(b []byte) (any, error) { return ParseBody(b) }},
		{"Verdict", []any{
			Verdict{ID: 3, Action: ActionAllow, SetHeaders: map[string][]string{"x-a": {"1"}, "x-b": {"1", "2"}},
				RemoveHeaders: []string{"cookie"}, Cred: "github", Credential: "tok"},
			Verdict{ID: 4, Action: ActionDeny, Status: 451, Reason: "not here"},
			Verdict{ID: 5, Action: ActionNeedBody, Max: 10},
		}, func(b []byte) (any, error) { return ParseVerdict(b) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := map[string]bool{}
			for _, v := range tc.values {
				rv := reflect.ValueOf(v)
				for i := range rv.NumField() {
					if !rv.Field(i).IsZero() {
						set[rv.Type().Field(i).Name] = true
					}
				}
				b, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				got, err := tc.parse(b)
				if err != nil || !reflect.DeepEqual(got, v) {
					t.Errorf("parse(%s) = %+v, %v; want %+v", b, got, err, v)
				}
			}
			typ := reflect.TypeOf(tc.values[0])
			for i := range typ.NumField() {
				if name := typ.Field(i).Name; !set[name] {
					t.Errorf("no value here sets %s.%s: set it, so that the test shows the parser reads it", typ.Name(), name)
				}
			}
		})
	}
}

// TestShapeOf: the members, required first in the struct's order, come
// from the json tags; a field the encoder may leave out (omitempty), or
// tagged decider:"optional", is optional.
func TestShapeOf(t *testing.T) {
	for _, tc := range []struct {
		s                  *shape
		required, optional []string
	}{
		{helloShape, []string{"t", "proto", "allowedDomains"}, []string{"deniedDomains"}},
		{reqShape, []string{"t", "id", "method", "host", "port", "path"}, []string{"hostHeader", "sni", "query", "headers"}},
		{bodyShape, []string{"t", "id", "data"}, []string{"cut"}},
		{verdictShape, []string{"t", "id", "action"}, []string{"setHeaders", "removeHeaders", "cred", "credential", "status", "reason", "max"}},
	} {
		if !reflect.DeepEqual(tc.s.required, tc.required) || !reflect.DeepEqual(tc.s.optional, tc.optional) {
			t.Errorf("shape %q = required %q, optional %q; want %q, %q", tc.s.t, tc.s.required, tc.s.optional, tc.required, tc.optional)
		}
	}
	for name, want := range map[string]string{"id": "", "action": "", "setHeaders": ActionAllow, "credential": ActionAllow,
		"status": ActionDeny, "reason": ActionDeny, "max": ActionNeedBody} {
		if got := verdictShape.action(name); got != want {
			t.Errorf("verdictShape.action(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestShapeOfRefuses: a field without a json name, or with an action
// that is none, stops the program at start, not a frame later.
func TestShapeOfRefuses(t *testing.T) {
	type unnamed struct {
		ID uint64
	}
	type badAction struct {
		ID uint64 `json:"id" action:"maybe"`
	}
	for name, f := range map[string]func(){
		"unnamed":    func() { shapeOf[unnamed]("x") },
		"bad action": func() { shapeOf[badAction]("x") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: shapeOf did not panic", name)
				}
			}()
			f()
		}()
	}
}
