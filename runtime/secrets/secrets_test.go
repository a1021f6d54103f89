package secrets

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// counter gives readable stand-ins: S1_, S2_, ... padded with x to the
// secret's length.
func counter() func(string) (string, error) {
	n := 0
	return func(real string) (string, error) {
		n++
		s := fmt.Sprintf("S%d_", n)
		return s + strings.Repeat("x", max(0, len(real)-len(s))), nil
	}
}

func TestMask(t *testing.T) {
	for _, c := range []struct {
		name, text string
		spec       Spec
		want       string
		reals      []string
		err        error
	}{
		{"whole value", "s3cret-value", Spec{}, "S1_xxxxxxxxx", []string{"s3cret-value"}, nil},
		{"whole file keeps its line break", "tok-123\n", Spec{File: true}, "S1_xxxx\n", []string{"tok-123"}, nil},
		{"whole file, CRLF", "tok-123\r\n", Spec{File: true}, "S1_xxxx\r\n", []string{"tok-123"}, nil},
		{"a variable's line break is part of it", "tok-123\n", Spec{}, "S1_xxxxx", []string{"tok-123\n"}, nil},
		{"empty", "", Spec{}, "", nil, nil},
		{"extract", "github.com:\n    oauth_token: gho_abcdef\n    user: me\n", Spec{Extract: `oauth_token:\s*(\S+)`, File: true},
			"github.com:\n    oauth_token: S1_xxxxxxx\n    user: me\n", []string{"gho_abcdef"}, nil},
		{"extract every match, the same secret once", "a=one1 b=two22 c=one1", Spec{Extract: `=(\w+)`},
			"a=S1_x b=S2_xx c=S1_x", []string{"one1", "two22"}, nil},
		{"ECMAScript lookbehind and a named group", "key=abcd other=zz", Spec{Extract: `(?<=key=)(?<v>[a-z]+)`},
			"key=S1_x other=zz", []string{"abcd"}, nil},
		{"an unmatched group is skipped", "x y", Spec{Extract: `(a)?x`}, "", nil, ErrNoMatch},
		{"no match", "nothing here", Spec{Extract: `token=(\w+)`}, "", nil, ErrNoMatch},
		{"a repeat outside the matches stays without duplicates", "token=abcd\n# abcd\n", Spec{Extract: `token=(\w+)`},
			"token=S1_x\n# abcd\n", []string{"abcd"}, nil},
		{"duplicates", "token=abcd\n# abcd\n", Spec{Extract: `token=(\w+)`, Duplicates: true},
			"token=S1_x\n# S1_x\n", []string{"abcd"}, nil},
		{"decode, not a token", "eyJub3Q.x.y", Spec{Decode: "jwt"}, "", nil, ErrNoMatch},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := Mask(c.text, c.spec, counter())
			if !errors.Is(err, c.err) || (err != nil) != (c.err != nil) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if err != nil {
				return
			}
			if m.Text != c.want {
				t.Errorf("text %q, want %q", m.Text, c.want)
			}
			var reals []string
			for _, p := range m.Pieces {
				reals = append(reals, p.Real)
				if !strings.Contains(m.Text, p.StandIn) {
					t.Errorf("stand-in %q not in the text", p.StandIn)
				}
			}
			if fmt.Sprint(reals) != fmt.Sprint(c.reals) {
				t.Errorf("secrets %q, want %q", reals, c.reals)
			}
		})
	}
}

// TestUnknownDecoder: a decoder this package does not know is an error,
// not a whole-value mask: what the command sees must be what the plan says.
func TestUnknownDecoder(t *testing.T) {
	m, err := Mask("eyJhbGciOiJIUzI1NiJ9.e30.c2ln", Spec{Decode: "base64"}, counter())
	if err == nil || err.Error() != `unknown decoder "base64"` {
		t.Errorf("Mask(decode base64) = %+v, %v; want the error unknown decoder \"base64\"", m, err)
	}
}

func TestCompileRefuses(t *testing.T) {
	for _, re := range []string{`token=\w+`, `(?:a)`, `(`} {
		if _, err := Compile(re); err == nil {
			t.Errorf("Compile(%q) accepted", re)
		}
	}
}

func token(header, payload string) string {
	e := base64.RawURLEncoding.EncodeToString
	return e([]byte(header)) + "." + e([]byte(payload)) + "." + e([]byte("0123456789abcdef0123456789abcdef0123"))
}

func claimsOf(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%q is not a token", tok)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	if string(h) != `{"alg":"HS256","typ":"JWT"}` {
		t.Errorf("header %s", h)
	}
	return m
}

func TestJWT(t *testing.T) {
	real := token(`{"alg":"RS256","kid":"k1"}`, `{"sub":"user-1","email":"me@example.com","exp":1999999999,"scope":["a","b"]}`)
	text := "access_token: " + real + "\nrefresh: none\n"

	m, err := Mask(text, Spec{Decode: "jwt", File: true}, counter())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Pieces) != 1 || m.Pieces[0].Real != real {
		t.Fatalf("pieces %+v", m.Pieces)
	}
	fake := m.Pieces[0].StandIn
	if strings.Contains(m.Text, real) || !strings.Contains(m.Text, "access_token: "+fake+"\nrefresh: none\n") {
		t.Errorf("text %q", m.Text)
	}
	c := claimsOf(t, fake)
	if c["exp"] != float64(1999999999) {
		t.Errorf("exp %v: the times stay readable", c["exp"])
	}
	for _, k := range []string{"sub", "email", "scope"} {
		if s, _ := c[k].(string); !strings.HasPrefix(s, "S") {
			t.Errorf("claim %s = %v, want a stand-in", k, c[k])
		}
	}

	m, err = Mask(real, Spec{Decode: "jwt", MaskClaims: []string{"email"}}, counter())
	if err != nil {
		t.Fatal(err)
	}
	c = claimsOf(t, m.Text)
	if c["sub"] != "user-1" || c["email"] == "me@example.com" || !strings.HasPrefix(c["email"].(string), "S1_") {
		t.Errorf("maskClaims email: claims %v", c)
	}

	if _, err := Mask(real, Spec{Decode: "jwt", MaskClaims: []string{"nope"}}, counter()); !errors.Is(err, ErrNoMatch) {
		t.Errorf("none of the claims: err %v, want ErrNoMatch", err)
	}
	// Extract picks the candidates; an array payload is not a token.
	arr := token(`{"alg":"none"}`, `[1,2]`)
	m, err = Mask("a="+real+" b="+arr, Spec{Decode: "jwt", Extract: `=(\S+)`}, counter())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Pieces) != 1 || !strings.HasSuffix(m.Text, " b="+arr) {
		t.Errorf("extract+decode: %q %+v", m.Text, m.Pieces)
	}
}

func FuzzMask(f *testing.F) {
	f.Add("token=abcd # abcd", `token=(\w+)`, false)
	f.Add(token(`{"alg":"x"}`, `{"a":1}`), "", true)
	f.Fuzz(func(t *testing.T, text, extract string, jwt bool) {
		s := Spec{Extract: extract, Duplicates: true}
		if jwt {
			s.Decode = "jwt"
		}
		m, err := Mask(text, s, counter())
		if err != nil {
			return
		}
		for _, p := range m.Pieces {
			if p.Real == "" {
				t.Errorf("an empty secret")
			}
			if strings.Contains(m.Text, p.Real) && !strings.Contains(p.StandIn, p.Real) {
				t.Errorf("with duplicates, %q still holds %q", m.Text, p.Real)
			}
		}
	})
}
