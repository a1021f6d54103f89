// Package testtls serves HTTPS on loopback for tests: an upstream whose
// certificates come from a CA of its own, as a public server's come from
// a public CA.
package testtls

import (
	"crypto/tls"
	"net"
	"net/http"

	"srt.dev/runtime/proxy"
)

// A Server is an HTTPS server on 127.0.0.1.
type Server struct {
	Port string
	// CA signs its certificates: a leaf for whatever name a client asks
	// (127.0.0.1 when it names none).
	CA *proxy.CA
	// Leaf returns the certificate the server shows for name.
	Leaf func(name string) (*tls.Certificate, error)
	srv  *http.Server
}

// Serve starts a Server for h.
func Serve(h http.Handler) (*Server, error) {
	ca, err := proxy.NewCA()
	if err != nil {
		return nil, err
	}
	signer := &proxy.Terminator{CA: ca}
	s := &Server{CA: ca, Leaf: signer.Leaf, srv: &http.Server{Handler: h}}
	l, err := tls.Listen("tcp4", "127.0.0.1:0", &tls.Config{
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if h.ServerName == "" {
				return signer.Leaf("127.0.0.1")
			}
			return signer.Leaf(h.ServerName)
		},
	})
	if err != nil {
		return nil, err
	}
	go s.srv.Serve(l)
	_, s.Port, _ = net.SplitHostPort(l.Addr().String())
	return s, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }
