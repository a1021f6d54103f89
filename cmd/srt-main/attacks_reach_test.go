//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"srt.dev/internal/testenv"
)

// reachScript tries every way a process reaches another's descriptors
// and memory: the targets' /proc/PID/fd/N (opened for reading, for
// appending, and as a directory), pidfd_getfd, ptrace, /proc/PID/mem and
// process_vm_readv. It records each success in the file argv[1]: what it
// read through a descriptor, and a line per route that let it in; and it
// appends PWNED to every descriptor it could write. The targets are
// $TARGETS (pids), or every process it sees but the command's own (its
// process group: a command may trace and read its own processes).
const reachScript = `import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = open(sys.argv[1], 'a')
me = os.getpid()
def others(p):
    try:
        return os.getpgid(p) != os.getpgid(0)
    except OSError:
        return False
targets = [int(p) for p in os.environ.get('TARGETS', '').split()] or [int(p) for p in os.listdir('/proc') if p.isdigit() and others(int(p))]
def note(s):
    out.write(s + '\n'); out.flush()
def steal(data, how):
    if b'SECRET' in data:
        note('SECRET through ' + how)
for pid in targets:
    for fd in range(3, 32):
        path = '/proc/%d/fd/%d' % (pid, fd)
        try:
            if os.path.isdir(path):
                for name in os.listdir(path):
                    with open(os.path.join(path, name), 'rb') as f:
                        steal(f.read(4096), 'a directory at ' + path)
            else:
                with open(path, 'rb') as f:
                    steal(f.read(4096), path)
        except OSError:
            pass
        try:
            with open(path, 'ab') as f:
                f.write(b'PWNED through /proc\n')
        except OSError:
            pass
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        pidfd = -1
    if pidfd >= 0:
        for fd in range(3, 32):
            n = libc.syscall(438, pidfd, fd, 0)
            if n < 0:
                continue
            note('pidfd_getfd %d/%d' % (pid, fd))
            try:
                steal(os.pread(n, 4096, 0), 'pidfd_getfd')
            except OSError:
                pass
            try:
                os.write(n, b'PWNED through pidfd_getfd\n')
            except OSError:
                pass
            os.close(n)
    if libc.ptrace(16, pid, 0, 0) == 0:
        note('ptrace %d' % pid)
        os.waitpid(pid, 0x40000000)
        libc.ptrace(17, pid, 0, 0)
    try:
        open('/proc/%d/mem' % pid, 'rb').close()
        note('mem %d' % pid)
    except OSError:
        pass
    class iovec(ctypes.Structure):
        _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
    buf = ctypes.create_string_buffer(8)
    local, remote = iovec(ctypes.addressof(buf), 8), iovec(8, 8)
    libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
    if ctypes.get_errno() == 14:
        note('process_vm_readv %d (EFAULT: past the permission check)' % pid)
`

// reachAttack: the caller leaves descriptors open when it runs srt (an
// agent harness's log, exec 3>>log): one on a file a denyRead hides, one
// on the directory it hides, one for appending to a file outside every
// write root. No process of the sandbox may reach them, by any route.
var reachAttack = attack{
	name: "descriptors srt inherited",
	setup: func(w *world) {
		w.write("s.json", `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`)
		w.write(filepath.Join(w.home, ".ssh/id_rsa"), "SECRET-KEY")
		w.write(filepath.Join(w.base, "reach.py"), reachScript)
		w.write(w.escaped, "")
	},
	steps: func(w *world, sandboxed bool) {
		open := `exec 7<"$HOME/.ssh/id_rsa" 8>>"$BASE/escaped" 9<"$HOME/.ssh"; `
		script := open + `TARGETS=$$ python3 "$BASE/reach.py" stolen; true`
		if sandboxed {
			script = open + `"$SRT" --settings s.json -c 'python3 "$BASE/reach.py" stolen'; true`
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		testenv.MkdirAll(w.t, w.run, 0o700)
		w.chown()
		cmd := w.command(ctx, "/bin/sh", "-c", script)
		cmd.Env = append(cmd.Env, "SRT="+w.bin)
		if out, err := cmd.CombinedOutput(); err != nil {
			w.t.Fatalf("%v\n%s", err, out)
		}
	},
	judge: func(w *world) string {
		var out []string
		if b, _ := os.ReadFile(filepath.Join(w.proj, "stolen")); len(b) > 0 {
			out = append(out, strings.Split(strings.TrimSpace(string(b)), "\n")...)
		}
		if b, _ := os.ReadFile(w.escaped); strings.Contains(string(b), "PWNED") {
			out = append(out, "wrote outside the write roots: "+strings.TrimSpace(string(b)))
		}
		return strings.Join(out, "; ")
	},
}

func init() { attacks = append(attacks, reachAttack) }

// linkedRootAttack: a run that may write the project replaces a
// directory on the way to another settings file's write root
// (node_modules) by a link to the home; a later run with allowWrite
// "./node_modules/.cache" would bind ~/.cache writable, where the user's
// tools keep what they run later. (A checkout can ship such a link too.)
var linkedRootAttack = attack{
	name: "a write root reached through a planted link",
	setup: func(w *world) {
		w.write("s.json", writeProject)
		w.write("cache.json", `{"network": {"allowedDomains": [], "deniedDomains": []}, "filesystem": {"denyRead": [], "allowWrite": [".", "./node_modules/.cache"], "denyWrite": []}}`)
		w.write("node_modules/.cache/kept", "")
		w.write(filepath.Join(w.home, ".cache/tool/run.sh"), "echo user's\n")
	},
	steps: func(w *world, sandboxed bool) {
		w.inSandbox(sandboxed, "s.json", `rm -rf node_modules && ln -s "$HOME" node_modules`)
		w.inSandbox(sandboxed, "cache.json", `echo planted > node_modules/.cache/tool/run.sh`)
	},
	judge: func(w *world) string {
		if b, _ := os.ReadFile(filepath.Join(w.home, ".cache/tool/run.sh")); strings.Contains(string(b), "planted") {
			return "the second run wrote ~/.cache through the link"
		}
		return ""
	},
}

func init() { attacks = append(attacks, linkedRootAttack) }
