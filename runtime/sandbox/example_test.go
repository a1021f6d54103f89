package sandbox_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log"
	"os"
	"strings"

	"srt.dev/compiler"
	"srt.dev/runtime/sandbox"
	"srt.dev/runtime/violations"
	"srt.dev/schema"
)

// A program that wraps several commands with one Manager: a prompt for
// unlisted hosts, a per-command allow list, and the refusals of each
// command appended to its stderr. (Compiled by go test; run it on Linux
// with bubblewrap installed.)
func Example() {
	settings := []byte(`{"network": {"allowedDomains": ["github.com"], "deniedDomains": ["*.internal.example"]},
	  "filesystem": {"denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": []}}`)
	p, diags, err := compiler.CompileFile("agent.json", settings, schema.Options{})
	if err != nil || diags != nil {
		log.Fatal(err, diags)
	}
	m, err := sandbox.NewManager(p, sandbox.ManagerOptions{
		// Asked only for hosts no rule decides; only true allows.
		Ask: func(ctx context.Context, host string, port int) (bool, string, error) {
			return host == "pypi.org" && port == 443, "only pypi.org may be added", nil
		},
		Audit: os.Stderr, // each run's start and exit, every decision, as JSON lines
	})
	if err != nil {
		log.Fatal(err)
	}

	// This command may also reach registry.npmjs.org: its id is a secret
	// of at least 22 characters, and the list is bound to its sandbox.
	raw := make([]byte, 16)
	rand.Read(raw)
	id := base64.RawURLEncoding.EncodeToString(raw)
	npm, err := compiler.AllowList([]string{"registry.npmjs.org"})
	if err != nil {
		log.Fatal(err)
	}
	if err := m.RegisterCommandNetworkLists(id, npm); err != nil {
		log.Fatal(err)
	}
	defer m.UnregisterCommandNetworkLists(id)

	var stderr strings.Builder
	res, err := m.Run(context.Background(), []string{"npm", "install"}, sandbox.Options{CommandID: id, Stderr: &stderr})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("exit", res.ExitCode)
	fmt.Print(m.Violations().Annotate(violations.Key(id), stderr.String()))
}
