//go:build linux

package sandbox

import (
	"context"
	"strings"
	"testing"

	"srt.dev/compiler/policy"
)

// TestNoProxyFromPolicy: the command's NO_PROXY leaves out what the
// policy, or the command's own allow list, lets it reach through the
// proxy, and keeps the rest of the reference's list.
func TestNoProxyFromPolicy(t *testing.T) {
	m, err := NewManager(compile(t, `"allowedDomains": ["example.com", "localhost:9443"], "deniedDomains": []`), ManagerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("k", MinCommandIDLength)
	l, _ := policy.ParseHostList([]string{"[::1]:3000"})
	if err := m.RegisterCommandNetworkLists(id, l); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		id, want string
	}{
		{"", "127.0.0.1,::1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"},
		{id, "127.0.0.1,169.254.0.0/16,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"},
	} {
		dir := t.TempDir()
		res, err := m.Run(context.Background(), []string{"true"}, Options{DryRun: true, Home: dir, Cwd: dir, CommandID: tt.id})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"NO_PROXY", "no_proxy"} {
			if got := setenv(res.Argv, name); got != tt.want {
				t.Errorf("command id %q: %s = %q, want %q", tt.id, name, got, tt.want)
			}
		}
	}
}

// setenv is the value the last --setenv NAME VALUE of argv gives name.
func setenv(argv []string, name string) string {
	v := ""
	for i := 0; i+2 < len(argv); i++ {
		if argv[i] == "--setenv" && argv[i+1] == name {
			v = argv[i+2]
		}
	}
	return v
}
