// Package testcerts makes the certificates of TLS tests: a CA, and server
// and client certificates it signs, written as PEM files into a test's
// directory. For tests only.
package testcerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority of a test.
type CA struct {
	// File is the CA certificate's PEM file.
	File string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	dir  string
	t    testing.TB
}

// Pair is a certificate and its key, as PEM files.
type Pair struct {
	CertFile, KeyFile string
}

// NewCA makes a CA named name in a new directory of t.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{cert: cert, key: key, dir: t.TempDir(), t: t}
	ca.File = ca.write(name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// Pool returns a pool holding the CA's certificate, for a tls.Config's
// RootCAs or ClientCAs.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Server makes a server certificate for 127.0.0.1, ::1, localhost and the
// given extra DNS names, usable as a client certificate as well.
func (ca *CA) Server(name string, dnsNames ...string) Pair {
	ca.t.Helper()
	return ca.issue(name, x509.ExtKeyUsageServerAuth, append([]string{"localhost"}, dnsNames...))
}

// Client makes a client certificate with the common name name.
func (ca *CA) Client(name string) Pair {
	ca.t.Helper()
	return ca.issue(name, x509.ExtKeyUsageClientAuth, nil)
}

func (ca *CA) issue(name string, usage x509.ExtKeyUsage, dnsNames []string) Pair {
	ca.t.Helper()
	key := newKey(ca.t)
	tmpl := &x509.Certificate{
		SerialNumber: serial(ca.t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		DNSNames:     dnsNames,
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		// A server is a client too where servers talk to each other (the
		// nodes of a Redis Cluster over TLS present it to one another).
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kd, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	return Pair{CertFile: ca.write(name+".pem", "CERTIFICATE", der), KeyFile: ca.write(name+"-key.pem", "EC PRIVATE KEY", kd)}
}

func (ca *CA) write(name, kind string, der []byte) string {
	p := filepath.Join(ca.dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		ca.t.Fatal(err)
	}
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func serial(t testing.TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
