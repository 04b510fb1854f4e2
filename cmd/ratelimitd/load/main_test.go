package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func TestParseRefusesNonLoopback(t *testing.T) {
	for _, target := range []string{"10.0.0.1:8080", "192.168.1.2:80", "example.com:80", "8.8.8.8:53"} {
		if _, err := parse([]string{"-target", target}); err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("-target %s: %v", target, err)
		}
	}
	for _, target := range []string{"127.0.0.1:8080", "[::1]:8081", "localhost:9"} {
		if _, err := parse([]string{"-target", target}); err != nil {
			t.Errorf("-target %s: %v", target, err)
		}
	}
	for _, args := range [][]string{{"-mode", "udp"}, {"-c", "0"}, {"-n", "0"}, {"-duration", "1h"}, {"-serve", "10.0.0.1:80"}, {"-client", "curl"},
		{"-mode", "grpc", "-grpc-timeout", "1500us"}, {"-mode", "grpc", "-grpc-timeout", "2m"}, {"-mode", "http", "-grpc-timeout", "20ms"}} {
		if _, err := parse(args); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestFloor: the do-nothing servers answer the generator's requests, with
// either client.
func TestFloor(t *testing.T) {
	for _, c := range [][2]string{{"http", "raw"}, {"grpc", "raw"}, {"grpc", "std"}} {
		r, err := loadFloor(t, c[0], "-client", c[1], "-c", "4", "-n", "200")
		if err != nil || r.requests != 200 || r.codes["error"] != 0 {
			t.Fatalf("%s: %v %+v", c[0], err, r)
		}
	}
}

// loadFloor runs the generator with args against a do-nothing server of
// mode started for it.
func loadFloor(t *testing.T, mode string, args ...string) (result, error) {
	t.Helper()
	addr, stop, err := startFloor(mode)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	o, err := parse(append([]string{"-mode", mode, "-target", addr}, args...))
	if err != nil {
		t.Fatal(err)
	}
	return runLoad(t.Context(), o)
}

// TestRawClient: the lean client reads every framing a net/http server
// writes: Content-Length, chunked with trailers, and Connection: close,
// after which it dials again; and it refuses what it cannot frame.
func TestRawClient(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch string(body) {
		case "length":
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte("denied"))
		case "chunked":
			w.Header().Set("Trailer", "X-Done")
			_, _ = w.Write(bytes.Repeat([]byte("a"), 5000))
			w.(http.Flusher).Flush()
			_, _ = w.Write([]byte("tail"))
			w.Header().Set("X-Done", "yes")
		case "close":
			w.Header().Set("Connection", "close")
			_, _ = w.Write([]byte("bye"))
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	rc := &rawConn{addr: addr, deadline: time.Now().Add(10 * time.Second)}
	defer rc.close()
	for range 3 {
		for _, c := range []struct {
			body string
			code int
		}{{"length", 429}, {"chunked", 200}, {"length", 429}, {"close", 200}} {
			code, err := rc.do(rawRequest(addr, "/", []byte(c.body)))
			if err != nil || code != c.code {
				t.Fatalf("%s: %d, %v", c.body, code, err)
			}
		}
	}
	if n := conns.Load(); n != 3 { // one connection per round: each ends with close
		t.Fatalf("%d connections, want 3", n)
	}

	// A server that answers without framing, or with garbage, is an error.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answers := []string{"HTTP/1.1 200 OK\r\n\r\nbody", "SSH-2.0-x\r\n", "HTTP/1.1 100 Continue\r\n\r\n"}
	go func() {
		for _, a := range answers {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 4096))
			_, _ = c.Write([]byte(a))
			c.Close()
		}
	}()
	bad := &rawConn{addr: ln.Addr().String(), deadline: time.Now().Add(10 * time.Second)}
	for _, a := range answers {
		if code, err := bad.do(rawRequest(addr, "/", []byte("x"))); err == nil {
			t.Errorf("%q: answered %d without an error", a, code)
		}
	}
}

// TestStdClient: -client std still works.
func TestStdClient(t *testing.T) {
	if r, err := loadFloor(t, "http", "-client", "std", "-c", "4", "-n", "100"); err != nil || r.codes["200"] != 100 {
		t.Fatalf("%v %+v", err, r)
	}
}

// mixedRLS answers by the descriptor's value: "over" is OVER_LIMIT, "bad"
// an InvalidArgument status, "big" an OK answer of many statuses (several
// DATA frames), anything else OK.
type mixedRLS struct {
	rlsv3.UnimplementedRateLimitServiceServer
}

func (mixedRLS) ShouldRateLimit(_ context.Context, r *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	switch r.Descriptors[0].Entries[0].Value {
	case "over":
		return &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OVER_LIMIT}, nil
	case "bad":
		return nil, status.Error(codes.InvalidArgument, "bad descriptor")
	case "big":
		res := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
		for range 2500 { // about 25 KB: two DATA frames
			res.Statuses = append(res.Statuses, &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK, LimitRemaining: 1 << 30})
		}
		return res, nil
	}
	return &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}, nil
}

// TestRawGRPCClient: the lean HTTP/2 client names every outcome as
// grpc-go's client does (OK, OVER_LIMIT, an error status, an answer larger
// than one frame), for many calls in flight at once on its one connection,
// well past the server's initial flow-control windows; and a call on a
// closed connection fails at once.
func TestRawGRPCClient(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rlsv3.RegisterRateLimitServiceServer(srv, mixedRLS{})
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	addr := ln.Addr().String()
	values := []string{"ok", "over", "bad", "big"}
	for _, client := range []string{"raw", "std"} {
		o := options{mode: "grpc", client: client, target: addr, domain: "d", descriptor: "k", keys: 1, conc: 1}
		got := map[string]string{}
		for _, v := range values {
			callers, closeFn, err := newCallersFor(o, time.Now().Add(time.Minute), []string{v})
			if err != nil {
				t.Fatal(err)
			}
			code, _ := callers[0](t.Context(), 0)
			closeFn()
			got[v] = code
		}
		want := map[string]string{"ok": "OK", "over": "OVER_LIMIT", "bad": "error:InvalidArgument", "big": "OK"}
		for _, v := range values {
			if got[v] != want[v] {
				t.Errorf("%s client, %q: %q, want %q", client, v, got[v], want[v])
			}
		}
	}

	// Many calls in flight, past the server's 64 KiB windows both ways.
	h, err := dialH2(addr, time.Now().Add(time.Minute), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := map[string][]byte{}
	for _, v := range values {
		m, err := proto.Marshal(rlsRequest("d", "k", v))
		if err != nil {
			t.Fatal(err)
		}
		msgs[v] = grpcMessage(m)
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for w := range 32 {
		wg.Go(func() {
			for i := range 100 {
				v := values[(w+i)%len(values)]
				code, _ := h.call(msgs[v])
				if want := map[string]string{"ok": "OK", "over": "OVER_LIMIT", "bad": "error:InvalidArgument", "big": "OK"}[v]; code != want {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d of 3200 calls in flight together named wrongly", n)
	}
	h.close()
	if _, err := h.call(msgs["ok"]); err == nil {
		t.Fatal("a call on a closed connection succeeded")
	}
}

// deadlineRLS answers OK and sends on seen how long each call had left
// until its deadline, or -1 for a call without one.
type deadlineRLS struct {
	rlsv3.UnimplementedRateLimitServiceServer
	seen chan time.Duration
}

func (d deadlineRLS) ShouldRateLimit(ctx context.Context, _ *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	left := time.Duration(-1)
	if dl, ok := ctx.Deadline(); ok {
		left = time.Until(dl)
	}
	d.seen <- left
	return &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}, nil
}

// TestGRPCTimeout: with -grpc-timeout both clients give each call that
// deadline, as Envoy does; without it, none.
func TestGRPCTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rls := deadlineRLS{seen: make(chan time.Duration, 1)}
	srv := grpc.NewServer()
	rlsv3.RegisterRateLimitServiceServer(srv, rls)
	go func() { _ = srv.Serve(ln) }()
	defer srv.Stop()
	for _, client := range []string{"raw", "std"} {
		for _, timeout := range []time.Duration{0, 20 * time.Millisecond, time.Minute} {
			o := options{mode: "grpc", client: client, target: ln.Addr().String(), domain: "d", descriptor: "k", keys: 1, conc: 1, grpcTimeout: timeout}
			callers, closeFn, err := newCallersFor(o, time.Now().Add(time.Minute), []string{"ok"})
			if err != nil {
				t.Fatal(err)
			}
			code, err := callers[0](t.Context(), 0)
			closeFn()
			left := <-rls.seen
			switch {
			case code != "OK":
				t.Errorf("%s client, -grpc-timeout %v: %q, %v", client, timeout, code, err)
			case timeout == 0 && left != -1:
				t.Errorf("%s client without -grpc-timeout: the call had a deadline %v away", client, left)
			case timeout > 0 && (left <= 0 || left > timeout):
				t.Errorf("%s client, -grpc-timeout %v: the call's deadline was %v away", client, timeout, left)
			}
		}
	}
}

// TestRate: with -rate the clients keep the pace: the run cannot end
// before the last request is due. (How close to the pace a loaded machine
// keeps is for the bench, not for a test.)
func TestRate(t *testing.T) {
	r, err := loadFloor(t, "http", "-c", "4", "-n", "400", "-rate", "2000")
	if err != nil || r.codes["200"] != 400 {
		t.Fatalf("%v %+v", err, r)
	}
	if due := 399 * time.Second / 2000; r.elapsed < due {
		t.Fatalf("400 requests at 2,000/s took %v: the last one is due at %v", r.elapsed, due)
	}
	for _, bad := range []string{"-1", "2e7"} {
		if _, err := parse([]string{"-rate", bad}); err == nil {
			t.Errorf("-rate %s accepted", bad)
		}
	}
}

// TestDefaultTargetFollowsTheMode: -mode grpc aims at ratelimitd's gRPC
// port, the other modes at its HTTP port.
func TestDefaultTargetFollowsTheMode(t *testing.T) {
	for mode, want := range map[string]string{"grpc": "127.0.0.1:8081", "http": "127.0.0.1:8080", "json": "127.0.0.1:8080"} {
		o, err := parse([]string{"-mode", mode})
		if err != nil || o.target != want {
			t.Errorf("-mode %s: target %q, %v; want %q", mode, o.target, err, want)
		}
	}
}
