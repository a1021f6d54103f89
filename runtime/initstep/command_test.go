package initstep

import (
	"slices"
	"strings"
	"testing"
)

func TestCommandRoundTrip(t *testing.T) {
	for _, c := range []struct{ argv, env []string }{
		{[]string{"true"}, nil},
		{[]string{"/bin/sh", "-c", "echo $A", ""}, []string{"A=1", "B=", "=odd"}},
		{[]string{"x", "with space", "ünïcode"}, []string{"PATH=/usr/bin:/bin"}},
	} {
		b, err := EncodeCommand(c.argv, c.env)
		if err != nil {
			t.Fatal(err)
		}
		argv, env, err := DecodeCommand(b)
		if err != nil {
			t.Fatalf("%q: %v", c.argv, err)
		}
		if !slices.Equal(argv, c.argv) || len(env) != len(c.env) || len(env) > 0 && !slices.Equal(env, c.env) {
			t.Errorf("round trip of %q %q gave %q %q", c.argv, c.env, argv, env)
		}
	}
}

func TestCommandRefused(t *testing.T) {
	if _, err := EncodeCommand(nil, nil); err == nil {
		t.Error("an empty command was encoded")
	}
	if _, err := EncodeCommand([]string{"a\x00b"}, nil); err == nil {
		t.Error("an argument with a NUL was encoded")
	}
	if _, err := EncodeCommand([]string{"a"}, []string{strings.Repeat("x", maxCommand)}); err == nil {
		t.Error("a command above the bound was encoded")
	}
	for _, bad := range []string{"", "1", "0\x00", "3\x00a\x00b\x00", "x\x00a\x00"} {
		if argv, env, err := DecodeCommand([]byte(bad)); err == nil {
			t.Errorf("DecodeCommand(%q) = %q %q, want an error", bad, argv, env)
		}
	}
	h := CommandHeader("tok", make([]byte, 300))
	if n, tok, err := ParseCommandHeader(h); err != nil || n != 300 || tok != "tok" {
		t.Errorf("ParseCommandHeader = %d %q %v, want 300 tok", n, tok, err)
	}
	if _, _, err := ParseCommandHeader([]byte{StartByte}); err == nil {
		t.Error("a plain start byte parsed as a command header")
	}
	if _, _, err := ParseCommandHeader([]byte{CommandByte, 0xff, 0xff, 0xff, 0xff}); err == nil {
		t.Error("a command above the bound was accepted")
	}
}
