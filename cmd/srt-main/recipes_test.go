//go:build linux

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"srt.dev/internal/testenv"
)

// A recipe is one section of docs/recipes.md: its shell blocks, each with
// the text its output must contain (the text block after it, if any).
type recipe struct {
	title string
	steps []recipeStep
}

type recipeStep struct {
	script string
	want   []string
}

// readRecipes splits docs/recipes.md into its sections with shell blocks.
func readRecipes(t *testing.T) []recipe {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "docs", "recipes.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []recipe
	var lang string
	var block []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.HasPrefix(line, "## "):
			out = append(out, recipe{title: strings.TrimPrefix(line, "## ")})
		case !in && strings.HasPrefix(line, "```"):
			in, lang, block = true, strings.TrimPrefix(line, "```"), nil
		case in && line == "```":
			in = false
			if len(out) == 0 {
				continue
			}
			r := &out[len(out)-1]
			switch lang {
			case "sh":
				r.steps = append(r.steps, recipeStep{script: strings.Join(block, "\n") + "\n"})
			case "text":
				if n := len(r.steps); n > 0 && r.steps[n-1].want == nil {
					r.steps[n-1].want = block
				}
			}
		case in:
			block = append(block, line)
		}
	}
	var withSteps []recipe
	for _, r := range out {
		if len(r.steps) > 0 {
			withSteps = append(withSteps, r)
		}
	}
	return withSteps
}

// recipesRun are the recipes docs/recipes.md must hold, by title: each is
// a job users bring to srt.
var recipesRun = []string{"An MCP server over stdio", "npm install from a registry on this machine", "go build",
	"A Go module with a dependency", "Python: pip install from an index on this machine", "Node over HTTPS", "git commit"}

// TestRecipes runs every recipe of docs/recipes.md as written, with srt
// and srtc built and on PATH, each in an empty directory with its own
// home, as on a fresh machine: no caches (no GOCACHE, GOMODCACHE or
// GOPATH from this environment), no configuration. The shell blocks of a
// recipe run in one shell, in order; whatever they leave running (a
// stand-in server of a recipe that failed) is killed with the shell's
// process group.
func TestRecipes(t *testing.T) {
	t.Parallel() // long, and independent of the rest: overlaps the other long tests
	requireSandbox(t)
	testenv.Require(t, "python3", "git", "go", "npm", "node", "curl", "openssl")
	bin := binDir
	recipes := readRecipes(t)
	have := map[string]bool{}
	for _, r := range recipes {
		have[r.title] = true
	}
	for _, title := range recipesRun {
		if !have[title] {
			t.Errorf("docs/recipes.md has no recipe %q with shell blocks", title)
		}
	}
	for _, r := range recipes {
		t.Run(r.title, func(t *testing.T) {
			dir := testDir(t)
			home := filepath.Join(dir, "home")
			work := filepath.Join(dir, "work")
			testenv.MkdirAll(t, home, 0o755)
			testenv.MkdirAll(t, work, 0o755)
			// srt and srtc first on PATH.
			var env []string
			for _, kv := range tmpEnv(t, home, os.TempDir()) {
				switch {
				case strings.HasPrefix(kv, "SRTC="), strings.HasPrefix(kv, "GOCACHE="):
				case strings.HasPrefix(kv, "PATH="):
					env = append(env, "PATH="+bin+":"+strings.TrimPrefix(kv, "PATH="))
				default:
					env = append(env, kv)
				}
			}
			var script strings.Builder
			script.WriteString("set -e\n")
			for i, s := range r.steps {
				script.WriteString(s.script)
				fmt.Fprintf(&script, "echo '--- step %d'\n", i)
			}
			cmd := exec.Command("bash", "-c", script.String())
			cmd.Dir = work
			cmd.Env = env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			timer := time.AfterFunc(4*time.Minute, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
			out, err := cmd.CombinedOutput()
			timer.Stop()
			if cmd.Process != nil {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			parts := strings.Split(string(out), "--- step ")
			for i, s := range r.steps {
				for _, w := range s.want {
					if i >= len(parts) || !strings.Contains(parts[i], w) {
						t.Errorf("step %d: output lacks %q:\n%s", i+1, w, out)
					}
				}
			}
		})
	}
}
