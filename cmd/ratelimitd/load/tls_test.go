package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/ratelimit-go/ratelimit/internal/testcerts"
)

// TestTLS: every client of every mode speaks TLS with -tls, trusting -ca
// and presenting -cert and -key to a server that requires them; gRPC over
// ALPN h2.
func TestTLS(t *testing.T) {
	ca := testcerts.NewCA(t, "load")
	srvPair, cl := ca.Server("floor"), ca.Client("load")
	pair, err := tls.LoadX509KeyPair(srvPair.CertFile, srvPair.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := ca.Pool()
	server := &tls.Config{Certificates: []tls.Certificate{pair}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: roots, MinVersion: tls.VersionTLS12}

	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(floorAnswer)
	}))
	hs.TLS = server.Clone()
	hs.StartTLS()
	defer hs.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.Creds(credentials.NewTLS(server.Clone())))
	rlsv3.RegisterRateLimitServiceServer(gs, floorRLS{})
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()

	for _, tc := range []struct{ mode, client, addr, want string }{
		{"http", "raw", hs.Listener.Addr().String(), "200"},
		{"http", "std", hs.Listener.Addr().String(), "200"},
		{"forward", "raw", hs.Listener.Addr().String(), "200"},
		{"grpc", "raw", ln.Addr().String(), "OK"},
		{"grpc", "std", ln.Addr().String(), "OK"},
	} {
		o, err := parse([]string{"-mode", tc.mode, "-client", tc.client, "-target", tc.addr, "-n", "50", "-c", "2",
			"-tls", "-ca", ca.File, "-cert", cl.CertFile, "-key", cl.KeyFile})
		if err != nil {
			t.Fatal(err)
		}
		r, err := runLoad(t.Context(), o)
		if err != nil || r.codes[tc.want] != 50 {
			t.Errorf("%s %s: %v %v", tc.mode, tc.client, r.codes, err)
		}
	}
	// Without the client certificate, the server refuses.
	o, err := parse([]string{"-mode", "http", "-target", hs.Listener.Addr().String(), "-n", "5", "-c", "1", "-tls", "-ca", ca.File})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runLoad(t.Context(), o); err == nil {
		t.Error("no client certificate: the load ran")
	}
	if _, err := parse([]string{"-ca", ca.File}); err == nil {
		t.Error("-ca without -tls accepted")
	}
}
