//go:build unix

// Command decider is an example decider for srt proxy. It starts srt
// proxy itself, connected to it by a socket pair (the proxy's
// --decider-fd) and a lifeline pipe (--lifeline-fd, so the proxy exits
// with it), and then answers every request the proxy asks about:
//
//   - only the hosts of -allow reach the decider at all (the proxy refuses
//     the others itself, from the hello lists);
//   - a path that may reach a -deny-path prefix is denied with 403: the
//     path is compared as servers read it, dot segments resolved and
//     escapes decoded (path.go), not as the client spelled it;
//   - everything else is allowed, with the -header edits added.
//
// Usage:
//
//	decider -srt /path/to/srt -listen 127.0.0.1:8080 -allow example.com \
//	    -allow '*.example.org' -deny-path /admin -header x-proxied-by=decider \
//	    [-- more srt proxy flags]
//
// Then: curl -x http://127.0.0.1:8080 http://example.com/.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"srt.dev/runtime/proxy/decider"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var allow, deny, denyPaths, headers list
	srt := flag.String("srt", "srt", "the srt binary")
	listen := flag.String("listen", "127.0.0.1:8080", "where srt proxy listens (loopback)")
	flag.Var(&allow, "allow", "a host the proxy may reach, in allowedDomains syntax (repeatable)")
	flag.Var(&deny, "deny", "a host the proxy must not reach, in deniedDomains syntax (repeatable)")
	flag.Var(&denyPaths, "deny-path", "refuse requests whose path, read as servers read it, starts with this (repeatable)")
	flag.Var(&headers, "header", "name=value to set on every allowed request (repeatable)")
	flag.Parse()
	log.SetPrefix("decider: ")
	log.SetFlags(0)

	set := map[string][]string{}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, "=")
		if !ok {
			log.Fatalf("-header %q: want name=value", h)
		}
		set[strings.ToLower(name)] = append(set[strings.ToLower(name)], value)
	}

	// fds[0] is ours, fds[1] becomes the proxy's descriptor 3.
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		log.Fatal(err)
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	ours := os.NewFile(uintptr(fds[0]), "decider")
	theirs := os.NewFile(uintptr(fds[1]), "proxy")
	conn, err := net.FileConn(ours)
	if err != nil {
		log.Fatal(err)
	}
	ours.Close()
	// The proxy reads the lifeline (descriptor 4) until we exit.
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		log.Fatal(err)
	}
	args := append([]string{"proxy", "--listen", *listen, "--decider-fd", "3", "--lifeline-fd", "4"}, flag.Args()...)
	cmd := exec.Command(*srt, args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{theirs, lifeR}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	theirs.Close()
	lifeR.Close()
	defer lifeW.Close()
	go func() {
		err := cmd.Wait()
		log.Fatalf("srt proxy ended: %v", err)
	}()

	// 1. The proxy greets first; we answer with our lists.
	if _, err := decider.ReadFrame(conn, decider.MaxFrame); err != nil {
		log.Fatalf("reading the proxy's hello: %v", err)
	}
	send(conn, decider.Hello{AllowedDomains: allow, DeniedDomains: deny})

	// 2. One verdict per req frame. This decider never asks for bodies.
	for {
		b, err := decider.ReadFrame(conn, decider.MaxBodyFrame)
		if err != nil {
			log.Fatalf("reading from the proxy: %v", err)
		}
		r, err := decider.ParseReq(b)
		if err != nil {
			log.Fatalf("unexpected frame: %v", err)
		}
		v := decider.Verdict{ID: r.ID, Action: decider.ActionAllow}
		// The path comes as the client spelled it: compare what a
		// server will make of it (path.go), never the spelling.
		if p, denied := deniedPath(r.Path, denyPaths); denied {
			v = decider.Verdict{ID: r.ID, Action: decider.ActionDeny, Status: 403,
				Reason: "the path " + p + " is refused by the example decider"}
		}
		if v.Action == decider.ActionAllow && len(set) > 0 {
			v.SetHeaders = set
		}
		log.Printf("%s %s:%d%s -> %s", r.Method, r.Host, r.Port, r.Path, v.Action)
		send(conn, v)
	}
}

// send writes one frame: the message as JSON after its length.
func send(conn net.Conn, msg interface{ MarshalJSON() ([]byte, error) }) {
	b, err := msg.MarshalJSON()
	if err == nil {
		err = decider.WriteFrame(conn, b)
	}
	if err != nil {
		log.Fatal(fmt.Errorf("writing to the proxy: %w", err))
	}
}
