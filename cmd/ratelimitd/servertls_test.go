package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/ratelimit-go/ratelimit/internal/testcerts"
)

// tlsConfigFor is a service configuration serving TLS with the
// certificate files in dir, and with clientCA, mTLS.
func tlsConfigFor(dir, clientCA string) string {
	c := "tls:\n  cert_file: " + filepath.Join(dir, "server.pem") + "\n  key_file: " + filepath.Join(dir, "server-key.pem") + "\n"
	if clientCA != "" {
		c += "  client_ca_file: " + clientCA + "\n"
	}
	return c + `policies:
  api: "100/1m"
envoy:
  domains:
    - domain: d
      descriptors:
        - key: user
          rate_limit: {unit: minute, requests_per_unit: 100}
`
}

// installCert copies a certificate pair to dir's server.pem and
// server-key.pem, where the configuration reads them.
func installCert(t *testing.T, dir string, p testcerts.Pair) {
	t.Helper()
	for src, dst := range map[string]string{p.CertFile: "server.pem", p.KeyFile: "server-key.pem"} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst+".tmp"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, dst+".tmp"), filepath.Join(dir, dst)); err != nil {
			t.Fatal(err)
		}
	}
}

func keyPair(t *testing.T, p testcerts.Pair) []tls.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	return []tls.Certificate{c}
}

// tlsCheck sends one /v1/check over HTTPS and one ShouldRateLimit over
// gRPC with TLS, presenting certs, and returns their errors.
func tlsCheck(t *testing.T, in *instance, roots *x509.CertPool, certs []tls.Certificate) (httpErr, grpcErr error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: roots, Certificates: certs, MinVersion: tls.VersionTLS12}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	res, err := hc.Post("https://"+in.addrs.HTTP+"/v1/check", "application/json", strings.NewReader(`{"key":"k","policies":["api"]}`))
	if err == nil {
		res.Body.Close()
		if res.StatusCode != 200 {
			err = &statusError{res.StatusCode}
		}
	}
	conn, gerr := grpc.NewClient(in.addrs.GRPC, grpc.WithTransportCredentials(credentials.NewTLS(cfg.Clone())))
	if gerr != nil {
		t.Fatal(gerr)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, gerr := rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, rlsRequest("d", 1, []string{"user", "u1"}))
	if gerr == nil && out.OverallCode != rlsv3.RateLimitResponse_OK {
		gerr = &statusError{int(out.OverallCode)}
	}
	return err, gerr
}

type statusError struct{ code int }

func (e *statusError) Error() string { return "status " + http.StatusText(e.code) }

// TestServiceTLS: HTTP and gRPC over TLS; with a client CA, both refuse a
// client without a certificate or with one of another CA; a new
// certificate file is served after a reload, without a restart.
func TestServiceTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "service")
	clients := testcerts.NewCA(t, "clients")
	intruders := testcerts.NewCA(t, "intruders")
	roots := ca.Pool()
	good, bad := keyPair(t, clients.Client("envoy")), keyPair(t, intruders.Client("envoy"))

	t.Run("TLS", func(t *testing.T) {
		dir := t.TempDir()
		installCert(t, dir, ca.Server("ratelimitd"))
		in := start(t, "-config", writeConfig(t, "c.yaml", tlsConfigFor(dir, "")))
		if h, g := tlsCheck(t, in, roots, nil); h != nil || g != nil {
			t.Fatalf("over TLS: HTTP %v, gRPC %v", h, g)
		}
		// Plaintext is refused.
		if code, _, _ := in.do("POST", "/v1/check", "application/json", `{"key":"k","policies":["api"]}`); code != 400 {
			t.Errorf("plaintext HTTP: %d, want net/http's 400 for HTTP to an HTTPS port", code)
		}
		// A client that does not trust the certificate fails.
		if h, g := tlsCheck(t, in, x509.NewCertPool(), nil); h == nil || g == nil {
			t.Errorf("an untrusting client: HTTP %v, gRPC %v", h, g)
		}

		// Reload: a new certificate is served to the connections after it.
		serial := func() *big.Int {
			c, err := tls.Dial("tcp", in.addrs.HTTP, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			return c.ConnectionState().PeerCertificates[0].SerialNumber
		}
		before := serial()
		next := ca.Server("ratelimitd-next")
		installCert(t, dir, next)
		in.hup <- syscall.SIGHUP
		waitFor(t, "the new certificate served", func() bool { return serial().Cmp(before) != 0 })
		if h, g := tlsCheck(t, in, roots, nil); h != nil || g != nil {
			t.Fatalf("after the reload: HTTP %v, gRPC %v", h, g)
		}
	})

	t.Run("mTLS", func(t *testing.T) {
		dir := t.TempDir()
		installCert(t, dir, ca.Server("ratelimitd"))
		in := start(t, "-config", writeConfig(t, "c.yaml", tlsConfigFor(dir, clients.File)))
		if h, g := tlsCheck(t, in, roots, good); h != nil || g != nil {
			t.Fatalf("with a client certificate: HTTP %v, gRPC %v", h, g)
		}
		for name, certs := range map[string][]tls.Certificate{"no client certificate": nil, "another CA's certificate": bad} {
			if h, g := tlsCheck(t, in, roots, certs); h == nil || g == nil {
				t.Errorf("%s: HTTP %v, gRPC %v; want both refused", name, h, g)
			}
		}
		if strings.Contains(in.logs.String(), "panic") {
			t.Errorf("logs:\n%s", in.logs)
		}
	})

	t.Run("config errors", func(t *testing.T) {
		dir := t.TempDir()
		for _, tc := range []struct{ config, want string }{
			{"tls:\n  cert_file: x.pem\n", "give cert_file and key_file"},
			{"tls:\n  cert_file: x.pem\n  key_file: y.pem\n", "tls.cert_file"},
		} {
			if _, err := loadConfig(writeConfig(t, "c.yaml", tc.config), ""); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%q: %v, want %q", tc.config, err, tc.want)
			}
		}
		installCert(t, dir, ca.Server("ratelimitd"))
		cfg := writeConfig(t, "c.yaml", tlsConfigFor(dir, ""))
		in := start(t, "-config", cfg)
		// Turning TLS off needs a restart: the reload is refused, TLS stays.
		if err := os.WriteFile(cfg, []byte("policies:\n  api: \"100/1m\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		in.hup <- syscall.SIGHUP
		waitFor(t, "the reload refused", func() bool { return strings.Contains(in.logs.String(), "changing that needs a restart") })
		if h, _ := tlsCheck(t, in, roots, nil); h != nil {
			t.Errorf("after the refused reload: %v", h)
		}
	})
}
