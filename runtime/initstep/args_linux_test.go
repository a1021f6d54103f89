//go:build linux

package initstep

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestParseArgs: the init step's options come before "--" (or the
// first word that is none), in any order; anything else is refused.
func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    Options
		command []string
		err     string
	}{
		{"bare command", []string{"sh", "-c", "x"}, Options{}, []string{"sh", "-c", "x"}, ""},
		{"dashes", []string{"--", "--sh"}, Options{}, []string{"--sh"}, ""},
		{"all", []string{"--tty=0,2", LandlockArg + "signal", LandlockWriteArg + "/tmp", RlimitArg + "nofile=64:64", "--", "sh"},
			Options{TTYFDs: []int{0, 2}, Landlock: &LandlockSpec{Scopes: []string{"signal"}, Write: []string{"/tmp"}}, Rlimits: []string{"nofile=64:64"}}, []string{"sh"}, ""},
		{"unknown", []string{"--nope", "sh"}, Options{}, nil, `unknown option "--nope"`},
		{"bad tty", []string{"--tty=3", "sh"}, Options{}, nil, "bad --tty=3"},
		{"write without landlock", []string{LandlockWriteArg + "/tmp", "sh"}, Options{}, nil, "without"},
		{"no command", []string{"--tty=0", "--"}, Options{}, nil, "no command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, command, err := ParseArgs(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseArgs(%q) error = %v, want %q", tc.args, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(command, tc.command) {
				t.Errorf("ParseArgs(%q) = %+v, %q, %v; want %+v, %q", tc.args, got, command, err, tc.want, tc.command)
			}
		})
	}
}

func TestParseTTYArg(t *testing.T) {
	tests := []struct {
		in   string
		want []int
	}{
		{"0,1,2", []int{0, 1, 2}},
		{"1", []int{1}},
		{"", nil},
		{"3", nil},
		{"-1", nil},
		{"0,x", nil},
	}
	for _, tt := range tests {
		got, err := ParseTTYArg(tt.in)
		if !slices.Equal(got, tt.want) || (err == nil) != (tt.want != nil) {
			t.Errorf("ParseTTYArg(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
