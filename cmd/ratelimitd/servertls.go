package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"path/filepath"
)

// serverTLSSpec is the tls section: the service's own certificate, and the
// CA of the client certificates it requires (mTLS).
type serverTLSSpec struct {
	CertFile     located[string] `yaml:"cert_file"`
	KeyFile      located[string] `yaml:"key_file"`
	ClientCAFile located[string] `yaml:"client_ca_file"`
}

// serverTLS is the loaded tls section: every handshake takes the one of
// the configuration running, so that a reload replaces the certificate
// and the client CA for the connections that follow.
type serverTLS struct {
	cert      *tls.Certificate
	clientCAs *x509.CertPool // nil: no client certificate asked
	files     []string       // watched: a change reloads
}

// loadServerTLS reads the tls section's files (relative to the
// configuration's directory): nil without the section.
func loadServerTLS(path string, spec *serverTLSSpec, bad func(line int, field, format string, args ...any) error) (*serverTLS, error) {
	if spec == nil {
		return nil, nil
	}
	rel := func(p string) string {
		if p != "" && !filepath.IsAbs(p) {
			return filepath.Join(filepath.Dir(path), p)
		}
		return p
	}
	if spec.CertFile.V == "" || spec.KeyFile.V == "" {
		return nil, bad(spec.CertFile.Line+spec.KeyFile.Line, "tls", "give cert_file and key_file, the service's certificate and its key")
	}
	cf, kf := rel(spec.CertFile.V), rel(spec.KeyFile.V)
	pair, err := tls.LoadX509KeyPair(cf, kf)
	if err != nil {
		return nil, bad(spec.CertFile.Line, "tls.cert_file", "%v", err)
	}
	st := &serverTLS{cert: &pair, files: []string{cf, kf}}
	if ca := spec.ClientCAFile.V; ca != "" {
		p := rel(ca)
		pem, err := readConfigFile(p)
		if err != nil {
			return nil, bad(spec.ClientCAFile.Line, "tls.client_ca_file", "%v", err)
		}
		st.clientCAs = x509.NewCertPool()
		if !st.clientCAs.AppendCertsFromPEM(pem) {
			return nil, bad(spec.ClientCAFile.Line, "tls.client_ca_file", "%s holds no PEM certificate", p)
		}
		st.files = append(st.files, p)
	}
	return st, nil
}

// mode is what a reload must keep: TLS or not, mTLS or not.
func (st *serverTLS) mode() string {
	switch {
	case st == nil:
		return "plaintext"
	case st.clientCAs != nil:
		return "TLS with client certificates"
	}
	return "TLS"
}

// listenerConfig returns the tls.Config of a listener offering protos by
// ALPN: each handshake takes the certificate and client CA of the
// configuration running then.
func (s *service) listenerConfig(protos ...string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: protos,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			st := s.cfg.Load().tls
			if st == nil {
				return nil, fmt.Errorf("no certificate configured")
			}
			c := &tls.Config{MinVersion: tls.VersionTLS12, NextProtos: protos, Certificates: []tls.Certificate{*st.cert}}
			if st.clientCAs != nil {
				c.ClientAuth, c.ClientCAs = tls.RequireAndVerifyClientCert, st.clientCAs
			}
			return c, nil
		},
	}
}
