// Package testtls serves HTTPS on loopback for tests: an upstream whose
// certificates come from a CA of its own, as a public server's come from
// a public CA. It stands apart from srt's own CA (runtime/proxy), so that
// the tests check srt against certificates it did not make.
package testtls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"
)

// A CA signs the server's certificates.
type CA struct {
	// PEM is the CA's certificate, for a client's trust store.
	PEM  []byte
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	mu   sync.Mutex
	leaf map[string]*tls.Certificate
}

func newCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "testtls upstream CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), cert: cert, key: key, leaf: map[string]*tls.Certificate{}}, nil
}

// Leaf returns the certificate for name (a host name or an IP address),
// made once, with its parsed form in Leaf.
func (ca *CA) Leaf(name string) (*tls.Certificate, error) {
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if c, ok := ca.leaf[name]; ok {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
	ca.leaf[name] = c
	return c, nil
}

// A Server is an HTTPS server on 127.0.0.1.
type Server struct {
	Port string
	// CA signs its certificates: a leaf for whatever name a client asks
	// (127.0.0.1 when it names none).
	CA *CA
	// Leaf returns the certificate the server shows for name.
	Leaf func(name string) (*tls.Certificate, error)
	srv  *http.Server
}

// Serve starts a Server for h.
func Serve(h http.Handler) (*Server, error) {
	ca, err := newCA()
	if err != nil {
		return nil, err
	}
	s := &Server{CA: ca, Leaf: ca.Leaf, srv: &http.Server{Handler: h}}
	l, err := tls.Listen("tcp4", "127.0.0.1:0", &tls.Config{
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			if h.ServerName == "" {
				return ca.Leaf("127.0.0.1")
			}
			return ca.Leaf(h.ServerName)
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
