//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"srt.dev/internal/testenv"
)

// userHooksPathAttack: the user's ~/.gitconfig keeps hooks in each
// working tree (core.hooksPath = .githooks, as husky and many teams do);
// the command makes a repository and plants a hook there, where the
// user's next commit runs it.
var userHooksPathAttack = attack{
	name: "a hook where the user's relative core.hooksPath points",
	setup: func(w *world) {
		w.write("s.json", writeProject)
		w.write(filepath.Join(w.home, ".gitconfig"), "[core]\n\thooksPath = .githooks\n")
	},
	steps: func(w *world, sandboxed bool) {
		w.inSandbox(sandboxed, "s.json", `mkdir -p a/b/c && cd a/b/c && git init -q sub && mkdir sub/.githooks && cp "$P" sub/.githooks/pre-commit && chmod +x sub/.githooks/pre-commit`)
		w.hostGit(filepath.Join(w.proj, "a/b/c/sub"))
	},
	judge: func(w *world) string { return w.pwned() },
}

// tunnelsAttack: the command opens as many connections through the
// proxies as it can and plants a hook, so that srt would have no
// descriptor left for the check after the run; srt runs with a low
// open-file limit, as a container might.
var tunnelsAttack = attack{
	name: "the check starved of descriptors by connections",
	setup: func(w *world) {
		w.write("s.json", writeProject)
		// A repository deeper than the scan at the start looks, which
		// existed before the run: a walk that could not open one of its
		// unchanged ancestors would not reach its hooks.
		deep := filepath.Join(w.proj, "deep/a/b/c")
		testenv.MkdirAll(w.t, deep, 0o755)
		w.chown()
		gitRepo(w, deep)
		w.write(filepath.Join(w.base, "conns.py"), `import socket, time
socks = []
for port in (3128, 1080):
    for i in range(400):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=1)
            socks.append(s)
        except OSError:
            pass
print(len(socks), "connections", flush=True)
`)
	},
	steps: func(w *world, sandboxed bool) {
		if !sandboxed {
			return
		}
		script := `python3 "$BASE/conns.py" && cp "$P" deep/a/b/c/.git/hooks/pre-commit && chmod +x deep/a/b/c/.git/hooks/pre-commit`
		out := w.sh(fmt.Sprintf(`ulimit -n 256; %q --settings s.json -c %q; echo "exit $?"`, w.bin, script))
		testenv.WriteFile(w.t, filepath.Join(w.base, "out"), []byte(out), 0o644)
		w.hostGit(filepath.Join(w.proj, "deep/a/b/c"))
	},
	judge: func(w *world) string {
		out, _ := os.ReadFile(filepath.Join(w.base, "out"))
		var bad []string
		if p := w.pwned(); p != "" {
			bad = append(bad, "the hook ran: "+p)
		}
		if !strings.Contains(string(out), "connections") || !strings.Contains(string(out), "exit 0") {
			bad = append(bad, "the check did not finish: "+string(out))
		}
		return strings.Join(bad, "; ")
	},
	noControl: true,
}

// lockedAwayAttack: the command plants names, then takes the permissions
// of their directories away (000: not even searchable; 0111: searchable
// only), so that a check that cannot list them passes over them; the
// user, their owner, can give them back at any time.
var lockedAwayAttack = attack{
	name:  "names planted in directories their owner then locks",
	setup: func(w *world) { w.write("s.json", writeProject) },
	steps: func(w *world, sandboxed bool) {
		w.inSandbox(sandboxed, "s.json", `mkdir -p a b/c && echo 'echo evil' > a/.bashrc && echo 'echo evil' > b/c/.profile && chmod 000 a && chmod 111 b`)
	},
	judge: func(w *world) string {
		var out []string
		for _, p := range []string{"a/.bashrc", "b/c/.profile"} {
			if _, err := os.Lstat(filepath.Join(w.proj, p)); err == nil {
				out = append(out, p+" is there")
			}
		}
		return strings.Join(out, ", ")
	},
}

func init() { attacks = append(attacks, userHooksPathAttack, tunnelsAttack, lockedAwayAttack) }
