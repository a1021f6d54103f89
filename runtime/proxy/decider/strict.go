package decider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// A ProtocolError is a frame that breaks the protocol. It ends the link.
type ProtocolError struct {
	Msg string
}

func (e *ProtocolError) Error() string { return "decider protocol: " + e.Msg }

func violation(format string, args ...any) error {
	return &ProtocolError{fmt.Sprintf(format, args...)}
}

// object checks that b is one JSON object in valid UTF-8 with no null, no
// duplicate key at any depth and nothing after it, and returns its
// members. encoding/json alone would accept all of these, and would match
// member names case-insensitively: the members are therefore looked up by
// their exact names (fields), and any other name is refused.
func object(b []byte, required, optional []string) (map[string]json.RawMessage, error) {
	if !utf8.Valid(b) {
		return nil, violation("the frame is not valid UTF-8")
	}
	if err := scan(b); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, violation("the frame is not one JSON object")
	}
	for _, k := range required {
		if _, ok := m[k]; !ok {
			return nil, violation("%q is missing", k)
		}
	}
	for k := range m {
		if !contains(required, k) && !contains(optional, k) {
			return nil, violation("unknown field %q", k)
		}
	}
	return m, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scan walks the tokens of one JSON value, refusing null, duplicate keys
// and trailing data.
func scan(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj  bool
		keys map[string]bool
		key  bool // the next string token of an object is a key
	}
	var stack []*frame
	for started := false; ; started = true {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return violation("the frame is not valid JSON: %v", err)
		}
		if started && len(stack) == 0 {
			return violation("data after the JSON object")
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.obj && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return violation("duplicate key %q", k)
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		if top != nil && top.obj {
			top.key = true
		}
		switch t := tok.(type) {
		case nil:
			return violation("null is not allowed (leave the field out)")
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &frame{obj: true, keys: map[string]bool{}, key: true})
			case '[':
				stack = append(stack, &frame{})
			case ']':
				stack = stack[:len(stack)-1]
			}
		}
	}
	if len(stack) != 0 {
		return violation("the frame is not valid JSON")
	}
	return nil
}

// field decodes the member name of m into v; absent leaves v alone.
func field(m map[string]json.RawMessage, name string, v any) error {
	raw, ok := m[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return violation("%q: %s is not a %s", name, te.Value, te.Type)
		}
		return violation("%q: %v", name, err)
	}
	return nil
}
