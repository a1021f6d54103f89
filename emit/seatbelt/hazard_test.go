package seatbelt

import (
	"strings"
	"testing"

	"srt.dev/compiler/policy"
)

func TestCrossRootHazard(t *testing.T) {
	deny := []policy.PathRule{{Path: policy.MustParsePath("${HOME}/.ssh"), Origin: policy.Origin{Key: "filesystem.denyRead[0]"}}}
	allow := []policy.PathRule{{Path: policy.Cwd.Path(), Origin: policy.Origin{Key: "filesystem.allowRead[0]"}}}
	p := &policy.Policy{}
	p.Filesystem.DenyRead, p.Filesystem.AllowRead = deny, allow
	if err := CrossRootHazard(p, "/Users/u", "/Users"); err == nil || !strings.Contains(err.Error(), "filesystem.denyRead[0] (/Users/u/.ssh) lies inside filesystem.allowRead[0] (/Users)") {
		t.Errorf("CWD above HOME: %v, want the hazard named", err)
	}
	if err := CrossRootHazard(p, "/Users/u", "/Users/u/proj"); err != nil {
		t.Errorf("CWD inside HOME: %v, want none", err)
	}
	if err := CrossRootHazard(p, "/Users/u", "/"); err == nil {
		t.Error("CWD at /: no hazard reported")
	}
	// /tmp is /private/tmp to Seatbelt: a working directory there lies
	// inside an allow of /tmp.
	p.Filesystem.DenyRead = []policy.PathRule{{Path: policy.MustParsePath("${CWD}/.git"), Origin: policy.Origin{Key: "filesystem.denyRead[0]"}}}
	p.Filesystem.AllowRead = []policy.PathRule{{Path: policy.MustParsePath("/tmp"), Origin: policy.Origin{Key: "filesystem.allowRead[0]"}}}
	if err := CrossRootHazard(p, "/Users/u", "/private/tmp/build"); err == nil {
		t.Error("CWD /private/tmp/build, deny ./.git, allow /tmp: no hazard reported")
	}
	p.Filesystem.AllowRead = []policy.PathRule{{Path: policy.MustParsePath("/var/../tmp"), Origin: policy.Origin{Key: "filesystem.allowRead[0]"}}}
	if err := CrossRootHazard(p, "/Users/u", "/private/tmp/build"); err == nil {
		t.Error("CWD /private/tmp/build, deny ./.git, allow /var/../tmp: no hazard reported")
	}
	p.Filesystem.DenyRead = deny
	p.Filesystem.AllowRead = []policy.PathRule{{Path: policy.Home.Path(), Origin: policy.Origin{Key: "filesystem.allowRead[0]"}}}
	if err := CrossRootHazard(p, "/Users/u", "/"); err != nil {
		t.Errorf("deny and allow under one root: %v, want none (the profile orders them)", err)
	}
}

func TestClimbingHazard(t *testing.T) {
	for _, tt := range []struct {
		path string
		bad  bool
	}{
		{"${CWD}/../secrets", true},
		{"${CWD}/..", true},
		{"${HOME}/a/../../x", true},
		{"${CWD}/src/../.git", false},
		{"/a/../b", false},
		{"${CWD}/..x", false},
	} {
		p := &policy.Policy{}
		p.Filesystem.AllowWrite = []policy.PathRule{{Path: policy.MustParsePath(tt.path), Origin: policy.Origin{Key: "filesystem.allowWrite[0]"}}}
		err := ClimbingHazard(p)
		if (err != nil) != tt.bad {
			t.Errorf("ClimbingHazard(%q) = %v, want an error: %v", tt.path, err, tt.bad)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "filesystem.allowWrite[0]: ") {
			t.Errorf("ClimbingHazard(%q) = %v, want the setting named first", tt.path, err)
		}
	}
}

// TestHostCheck: a profile does not run with HOME or CWD "/" (its rules
// under them would read "//name", which matches nothing) or a path that
// is not absolute and clean.
func TestHostCheck(t *testing.T) {
	for _, h := range []Host{
		{Home: "/Users/me", Cwd: "/"},
		{Home: "/", Cwd: "/Users/me/p"},
		{Home: "/Users/me", Cwd: "proj"},
		{Home: "/Users/me/", Cwd: "/Users/me/p"},
		{Home: "/Users/me", Cwd: "/Users/me/../me/p"},
	} {
		if err := h.Check(); err == nil {
			t.Errorf("Host.Check accepted HOME %q, CWD %q", h.Home, h.Cwd)
		}
	}
	if err := (Host{Home: "/Users/me", Cwd: "/Users/me/p"}).Check(); err != nil {
		t.Errorf("Host.Check refused a plain host: %v", err)
	}
}
