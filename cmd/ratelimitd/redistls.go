package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// loadBackendSecrets validates the backend's password sources and TLS
// section into spec. bad makes a configError of the file.
func loadBackendSecrets(fc *fileConfig, spec *backendSpec, path string, bad func(line int, field, format string, args ...any) error) error {
	b := &fc.Backend
	rel := func(p string) string {
		if p != "" && !filepath.IsAbs(p) {
			return filepath.Join(filepath.Dir(path), p)
		}
		return p
	}
	read := func(env, file located[string], field string) (secret, error) {
		switch {
		case env.V != "" && file.V != "":
			return secret{}, bad(file.Line, "backend."+field+"_file", "give %s_env or %s_file, not both", field, field)
		case env.V != "":
			v := os.Getenv(env.V)
			if v == "" {
				return secret{}, bad(env.Line, "backend."+field+"_env", "the environment variable %s is not set", env.V)
			}
			return secret{v}, nil
		case file.V != "":
			raw, err := readConfigFile(rel(file.V))
			if err != nil {
				return secret{}, bad(file.Line, "backend."+field+"_file", "%v", err)
			}
			v := strings.TrimRight(string(raw), "\r\n")
			if v == "" {
				return secret{}, bad(file.Line, "backend."+field+"_file", "%s is empty", rel(file.V))
			}
			return secret{v}, nil
		}
		return secret{}, nil
	}
	var err error
	if spec.Password, err = read(b.PasswordEnv, b.PasswordFile, "password"); err != nil {
		return err
	}
	if spec.SentinelPassword, err = read(b.SentinelPasswordEnv, b.SentinelPasswordFile, "sentinel_password"); err != nil {
		return err
	}
	redisURL := spec.URL != "memory"
	if !redisURL && (spec.Password.v != "" || spec.SentinelPassword.v != "" || b.TLS != nil) {
		return bad(b.URL.Line, "backend", "passwords and tls are for a Redis backend; the backend is the memory store")
	}
	if spec.SentinelPassword.v != "" && !strings.HasPrefix(spec.URL, "redis-sentinel://") {
		return bad(b.SentinelPasswordEnv.Line+b.SentinelPasswordFile.Line, "backend", "a Sentinel password is for a redis-sentinel:// URL")
	}
	if b.TLS == nil {
		return nil
	}
	t := b.TLS
	if strings.HasPrefix(spec.URL, "redis://") {
		return bad(b.URL.Line, "backend.tls", "the URL is redis://, which is plaintext: write rediss:// for TLS")
	}
	spec.TLS = tlsSpec{On: true, CAFile: rel(t.CAFile.V), CertFile: rel(t.CertFile.V), KeyFile: rel(t.KeyFile.V), ServerName: t.ServerName.V}
	if (t.CertFile.V == "") != (t.KeyFile.V == "") {
		return bad(t.CertFile.Line+t.KeyFile.Line, "backend.tls", "give cert_file and key_file together (a client certificate), or neither")
	}
	// Read now, so that a wrong file fails the start with its line.
	if _, err := spec.TLS.config(); err != nil {
		return bad(t.CAFile.Line, "backend.tls", "%v", err)
	}
	return nil
}

// config returns the tls.Config of the spec, reading its files: nil when
// the section is absent.
func (t tlsSpec) config() (*tls.Config, error) {
	if !t.On {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName}
	if t.CAFile != "" {
		pem, err := readConfigFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("ca_file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("ca_file %s holds no PEM certificate", t.CAFile)
		}
	}
	if t.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("cert_file and key_file: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}
