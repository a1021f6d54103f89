package decider

// The members of each frame, read once from its message struct: a field
// added to a struct is a member the strict parser knows, by the name its
// encoding writes.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// A shape is what one kind of frame holds: its envelope ("t", and
// "proto" in a hello), then the fields of its message struct, each named
// by its json tag. A field is required unless its json tag has omitempty
// (the encoder may leave it out) or it is tagged decider:"optional" (the
// encoder always writes it, the parser accepts it missing). A field
// tagged action:"A" goes only with the verdict action A.
type shape struct {
	t                  string
	required, optional []string
	members            []member
}

// A member is one field of a message struct as a frame holds it.
type member struct {
	name   string
	index  int    // the field's index in its struct
	action string // the only action it goes with; "" for any
}

// The shapes of the frames the parser reads.
var (
	helloShape   = shapeOf[Hello]("hello", "proto")
	reqShape     = shapeOf[Req]("req")
	bodyShape    = shapeOf[Body]("body")
	verdictShape = shapeOf[Verdict]("verdict")
)

// actions are the actions of a verdict.
var actions = []string{ActionAllow, ActionDeny, ActionNeedBody}

// shapeOf reads the shape of the frames of type t from M's fields;
// envelope names the members besides "t" that every such frame holds and
// M does not. It panics on a field it cannot name, or an action tag that
// names no action: a message struct must say how each field is written.
func shapeOf[M any](t string, envelope ...string) *shape {
	typ := reflect.TypeFor[M]()
	s := &shape{t: t, required: append([]string{"t"}, envelope...)}
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			panic(fmt.Sprintf("decider: %s.%s has no json name", typ.Name(), f.Name))
		}
		action := f.Tag.Get("action")
		if action != "" && !slices.Contains(actions, action) {
			panic(fmt.Sprintf("decider: %s.%s goes with action %q, which is none", typ.Name(), f.Name, action))
		}
		s.members = append(s.members, member{name: name, index: i, action: action})
		if slices.Contains(strings.Split(opts, ","), "omitempty") || f.Tag.Get("decider") == "optional" {
			s.optional = append(s.optional, name)
		} else {
			s.required = append(s.required, name)
		}
	}
	return s
}

// read checks that b is a frame of this shape (object: its required
// members there, no other name) and of its type, and returns its
// members.
func (s *shape) read(b []byte) (map[string]json.RawMessage, error) {
	m, err := object(b, s.required, s.optional)
	if err != nil {
		return nil, err
	}
	if err := wantType(m, s.t); err != nil {
		return nil, err
	}
	return m, nil
}

// decode decodes the members of m into the fields of msg, a pointer to
// the shape's struct, in the struct's order; it leaves out the members
// named in except, which the caller decodes.
func (s *shape) decode(m map[string]json.RawMessage, msg any, except ...string) error {
	v := reflect.ValueOf(msg).Elem()
	for _, f := range s.members {
		if slices.Contains(except, f.name) {
			continue
		}
		if err := field(m, f.name, v.Field(f.index).Addr().Interface()); err != nil {
			return err
		}
	}
	return nil
}

// action is the only action the member name goes with; "" for any.
func (s *shape) action(name string) string {
	for _, f := range s.members {
		if f.name == name {
			return f.action
		}
	}
	return ""
}
