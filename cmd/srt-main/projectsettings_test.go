//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// TestProjectSettingsUnwritable: a sandboxed command that may write the
// project, run under another settings file (~/.srt-settings.json), can
// neither rewrite the project's .srt-settings.json, the one srt's notice
// tells the user to run with (in the working directory, or at the top of
// the git working tree from below it, also by a move over it), nor leave
// a new one for a later run's notice to name: a file made during the run
// is moved into the quarantine. The control: a file of
// another name beside it is written. As root and as nobody.
func TestProjectSettingsUnwritable(t *testing.T) {
	requireSandbox(t)
	const narrow = `{"network": {"allowedDomains": [], "deniedDomains": []},
		"filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}}`
	const widened = `{"network": {"allowedDomains": ["*"], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": ["~"], "denyWrite": []}}`
	for _, uid := range testUsers() {
		t.Run("uid="+strconv.Itoa(uid), func(t *testing.T) {
			bin, root, proj := publicProject(t)
			fresh := filepath.Join(root, "fresh")
			for _, d := range []string{filepath.Join(proj, ".git"), filepath.Join(proj, "sub"), filepath.Join(fresh, ".git")} {
				testenv.MkdirAll(t, d, 0o755)
			}
			settings := filepath.Join(proj, ".srt-settings.json")
			testenv.WriteFile(t, settings, []byte(narrow), 0o644)
			testenv.WriteFile(t, filepath.Join(root, ".srt-settings.json"), []byte(`{"network": {"allowedDomains": [], "deniedDomains": []},
				"filesystem": {"denyRead": [], "allowWrite": ["`+proj+`", "`+fresh+`"], "denyWrite": []}}`), 0o644)
			write := `echo '` + widened + `' > `
			// From below the top of the working tree, then at the top.
			code, out := srtAs(t, bin, uid, root, filepath.Join(proj, "sub"), "-c",
				`(`+write+`../.srt-settings.json) 2>/dev/null || echo "top refused"; `+write+`../other.json && echo "control written"`)
			if code != 0 || !strings.Contains(out, "top refused\ncontrol written\n") {
				t.Errorf("from sub: exit %d\n%s", code, out)
			}
			code, out = srtAs(t, bin, uid, root, proj, "-c",
				`(`+write+`.srt-settings.json) 2>/dev/null || echo "refused"; `+write+`new.json && mv -f new.json .srt-settings.json 2>/dev/null || echo "move refused"`)
			if code != 0 || !strings.Contains(out, "refused\nmove refused\n") {
				t.Errorf("at the top: exit %d\n%s", code, out)
			}
			if b, err := os.ReadFile(settings); err != nil || string(b) != narrow {
				t.Errorf("the project's settings after the runs: %q, %v", b, err)
			}
			if b, err := os.ReadFile(filepath.Join(proj, "other.json")); err != nil || !strings.Contains(string(b), `"~"`) {
				t.Errorf("control: other.json %q, %v", b, err)
			}
			if !strings.Contains(out, "srtc explain ./.srt-settings.json") {
				t.Errorf("the notice does not say to review the file:\n%s", out)
			}
			// A project with none: one made during the run is not left for
			// the next run's notice.
			srtAs(t, bin, uid, root, fresh, "-c", write+`.srt-settings.json`)
			if _, err := os.Lstat(filepath.Join(fresh, ".srt-settings.json")); err == nil {
				t.Errorf("a .srt-settings.json made in the sandbox was left in the project")
			}
			if _, out := srtAs(t, bin, uid, root, fresh, "true"); strings.Contains(out, "not in use") {
				t.Errorf("the next run names a file the sandbox made:\n%s", out)
			}
		})
	}
}
