package sandbox

import (
	"testing"

	"srt.dev/compiler/policy"
	"srt.dev/runtime/violations"
)

func TestLandlockExplain(t *testing.T) {
	at := func(key, pos string) policy.Origin { return policy.Origin{Key: key, Pos: pos} }
	p := &policy.Policy{Source: "s.json", Filesystem: policy.Filesystem{
		AllowWrite: []policy.PathRule{
			{Path: policy.MustParsePath("/dev/null"), Origin: policy.Default},
			{Path: policy.Cwd.Path(), Origin: at("filesystem.allowWrite[0]", "s.json:3:20")},
			{Path: policy.MustParsePath("${HOME}/later"), Origin: at("filesystem.allowWrite[1]", "s.json:3:25")},
			{Path: policy.MustParsePath("${HOME}/*.log"), Pattern: true, Origin: at("filesystem.allowWrite[2]", "s.json:3:36")},
		},
		DenyRead: []policy.PathRule{{Path: policy.MustParsePath("${HOME}/.ssh"), Origin: at("filesystem.denyRead[0]", "s.json:2:15")}},
	}}
	x := &landlockExplainer{p: p, home: "/home/me", cwd: "/home/me/proj", granted: []string{"/home/me/proj", "/tmp/claude", "/dev/null"}}
	for _, c := range []struct {
		blockers    []string
		path        string
		rule, short string
		why         string
	}{
		{[]string{"fs.make_reg"}, "/dev", "default", "outside the write roots",
			"srt sandbox refused creating a file in /dev: no write root covers it (filesystem.allowWrite in s.json and srt's defaults); the second layer (Landlock) refused it."},
		{[]string{"fs.write_file"}, "/home/me/.ssh/known_hosts", "default", "outside the write roots",
			"srt sandbox refused writing /home/me/.ssh/known_hosts: no write root covers it (filesystem.allowWrite in s.json and srt's defaults), and filesystem.denyRead[0] (s.json:2:15) hides /home/me/.ssh behind an empty directory; the second layer (Landlock) refused it."},
		{[]string{"fs.make_dir"}, "/home/me/later", "filesystem.allowWrite[1]", "not a write root of this sandbox",
			"srt sandbox refused creating a directory in /home/me/later: filesystem.allowWrite[1] (s.json:3:25) names it, and this sandbox did not have it as a write root (it did not exist, or was not a directory of its own, when srt started); the second layer (Landlock) refused it."},
		// A pattern is expanded when srt starts: not a literal cover.
		{[]string{"fs.make_reg"}, "/home/me", "default", "outside the write roots",
			"srt sandbox refused creating a file in /home/me: no write root covers it (filesystem.allowWrite in s.json and srt's defaults); the second layer (Landlock) refused it."},
		{[]string{"fs.refer"}, "/home/me/proj/a", "default", "not allowed by the second layer there",
			"srt sandbox refused moving or linking a file into or out of /home/me/proj/a: the second layer (Landlock) does not allow it there (fs.refer)."},
		// The command chose the name in its write root: shown Go-quoted.
		{[]string{"fs.refer"}, "/home/me/proj/\x1b[2K\rsrt: all clear\n", "default", "not allowed by the second layer there",
			`srt sandbox refused moving or linking a file into or out of "/home/me/proj/\x1b[2K\rsrt: all clear\n": the second layer (Landlock) does not allow it there (fs.refer).`},
		{[]string{"fs.write_file"}, "/home/me/.ssh/a b", "default", "outside the write roots",
			`srt sandbox refused writing "/home/me/.ssh/a b": no write root covers it (filesystem.allowWrite in s.json and srt's defaults), and filesystem.denyRead[0] (s.json:2:15) hides /home/me/.ssh behind an empty directory; the second layer (Landlock) refused it.`},
		// /home/me/projects is beside the write root, not in it.
		{[]string{"fs.make_reg"}, "/home/me/projects", "default", "outside the write roots",
			"srt sandbox refused creating a file in /home/me/projects: no write root covers it (filesystem.allowWrite in s.json and srt's defaults); the second layer (Landlock) refused it."},
	} {
		got := x.explain(violations.LandlockDenial{Blockers: c.blockers, Path: c.path})
		if got.Rule.Key != c.rule || got.Short != c.short || got.Why != c.why {
			t.Errorf("explain(%v %q) = %+q\nwant rule %s, %q,\n%q", c.blockers, c.path, got, c.rule, c.short, c.why)
		}
	}
}
