package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"srt.dev/internal/testenv"
)

// nodeClient fetches its argument with fetch() and with https.get and
// prints what each got. Node that honours NODE_USE_ENV_PROXY (22.21 and
// later in the 22 line, 24.5 and later) needs nothing more; older Node
// ignores it, and gets what docs/recipes.md tells its users to add:
// undici's EnvHttpProxyAgent as fetch()'s dispatcher, and for https.get
// an agent that tunnels through HTTPS_PROXY with CONNECT.
const nodeClient = `
const http = require("http"), https = require("https"), net = require("net"), tls = require("tls");
const url = process.argv[2];
const [major, minor] = process.versions.node.split(".").map(Number);
const native = major > 24 || major === 24 && minor >= 5 || major === 22 && minor >= 21;
console.log("native " + native);
let agent;
if (!native) {
  const undici = require(process.env.UNDICI_PATH);
  undici.setGlobalDispatcher(new undici.EnvHttpProxyAgent());
  agent = new https.Agent();
  agent.createConnection = (opts, done) => {
    const p = new URL(process.env.HTTPS_PROXY);
    const auth = Buffer.from(decodeURIComponent(p.username) + ":" + decodeURIComponent(p.password)).toString("base64");
    http.request({host: p.hostname, port: p.port, method: "CONNECT", path: opts.host + ":" + opts.port,
                  headers: {"Proxy-Authorization": "Basic " + auth}})
      .on("connect", (res, sock) => {
        if (res.statusCode !== 200) return done(new Error("CONNECT " + res.statusCode));
        done(null, tls.connect({socket: sock, host: opts.host, servername: net.isIP(opts.host) ? undefined : opts.host}));
      })
      .on("error", done).end();
  };
}
https.get(url + "/https-get", {agent}, res => {
  let b = ""; res.on("data", d => b += d);
  res.on("end", () => console.log("https.get " + res.statusCode + " " + b.trim()));
}).on("error", e => { console.log("https.get error " + e.message); process.exitCode = 1; });
fetch(url + "/fetch").then(r => r.text().then(b => console.log("fetch " + r.status + " " + b.trim())))
  .catch(e => { console.log("fetch error " + e.message + " " + (e.cause && e.cause.message)); process.exitCode = 1; });
`

// undiciPath finds undici for Node that ignores NODE_USE_ENV_PROXY,
// without the network: installed globally, or the copy npm carries.
func undiciPath(t *testing.T) string {
	out, err := exec.Command("npm", "root", "-g").Output()
	if err == nil {
		root := strings.TrimSpace(string(out))
		for _, p := range []string{filepath.Join(root, "undici"), filepath.Join(root, "npm", "node_modules", "undici")} {
			if _, err := os.Stat(filepath.Join(p, "package.json")); err == nil {
				return p
			}
		}
	}
	return ""
}

// TestNodeThroughTheProxy: inside the sandbox, Node's fetch() and
// https.get reach an HTTPS upstream through srt's proxy, with
// NODE_USE_ENV_PROXY=1 set for the Node releases that read it.
func TestNodeThroughTheProxy(t *testing.T) {
	testenv.Require(t, "bwrap", "node", "npm")
	u := newUpstream(t, nil)
	dir := t.TempDir()
	testenv.WriteFile(t, filepath.Join(dir, "client.js"), []byte(nodeClient), 0o644)
	env := []string{}
	if p := undiciPath(t); p != "" {
		env = append(env, "UNDICI_PATH="+p)
	}
	script := noProxyOff + `echo "NODE_USE_ENV_PROXY=$NODE_USE_ENV_PROXY"; node client.js https://127.0.0.1:` + u.port
	out, errs, _, err := runScriptIn(t, dir, tlsSettings(t, u, "", ""), script, env...)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, errs)
	}
	if strings.Contains(out, "native false") && !strings.Contains(strings.Join(env, " "), "UNDICI_PATH") {
		testenv.Missing(t, "undici (this Node ignores NODE_USE_ENV_PROXY)", "npm install -g undici")
	}
	for _, want := range []string{"NODE_USE_ENV_PROXY=1", "https.get 200 hello /https-get", "fetch 200 hello /fetch"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s\nstderr: %s", want, out, errs)
		}
	}
	if got := u.requests(); !strings.Contains(got, "/https-get") || !strings.Contains(got, "/fetch") {
		t.Errorf("the upstream saw:\n%s", got)
	}
}
