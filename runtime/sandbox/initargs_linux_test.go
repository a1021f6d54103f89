//go:build linux

package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseInitArgs: the init step's options come before "--" (or the
// first word that is none), in any order; anything else is refused.
func TestParseInitArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    initOptions
		command []string
		err     string
	}{
		{"bare command", []string{"sh", "-c", "x"}, initOptions{}, []string{"sh", "-c", "x"}, ""},
		{"dashes", []string{"--", "--sh"}, initOptions{}, []string{"--sh"}, ""},
		{"all", []string{"--tty=0,2", landlockArg + "signal", landlockWriteArg + "/tmp", rlimitArg + "nofile=64:64", "--", "sh"},
			initOptions{ttyFDs: []int{0, 2}, ll: &landlockSpec{scopes: []string{"signal"}, write: []string{"/tmp"}}, rlimits: []string{"nofile=64:64"}}, []string{"sh"}, ""},
		{"unknown", []string{"--nope", "sh"}, initOptions{}, nil, `unknown option "--nope"`},
		{"bad tty", []string{"--tty=3", "sh"}, initOptions{}, nil, "bad --tty=3"},
		{"write without landlock", []string{landlockWriteArg + "/tmp", "sh"}, initOptions{}, nil, "without"},
		{"no command", []string{"--tty=0", "--"}, initOptions{}, nil, "no command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, command, err := parseInitArgs(tc.args)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("parseInitArgs(%q) error = %v, want %q", tc.args, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(command, tc.command) {
				t.Errorf("parseInitArgs(%q) = %+v, %q, %v; want %+v, %q", tc.args, got, command, err, tc.want, tc.command)
			}
		})
	}
}
