package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
)

// floorAnswer is what the floor servers answer every request with: a
// check's answer as ratelimitd would write it.
var floorAnswer = []byte(`{"allowed":true,"decisions":[{"policy":"api","allowed":true,"limit":1000,"remaining":999,"retry_after_ms":0,"reset_after_ms":1000}]}` + "\n")

// startFloor serves, on a loopback port, a server of the mode's protocol
// that does no work at all: it reads the request and writes a fixed answer.
// Load against it is the most this machine and this generator can measure.
func startFloor(mode string) (addr string, stop func(), err error) {
	return startFloorOn(mode, "127.0.0.1:0")
}

// startFloorOn is startFloor on a given address.
func startFloorOn(mode, at string) (addr string, stop func(), err error) {
	ln, err := net.Listen("tcp", at)
	if err != nil {
		return "", nil, err
	}
	if mode == "grpc" {
		s := grpc.NewServer(grpc.NumStreamWorkers(2))
		rlsv3.RegisterRateLimitServiceServer(s, floorRLS{})
		go func() { _ = s.Serve(ln) }()
		return ln.Addr().String(), s.Stop, nil
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Ratelimit-Policy", `"api";q=1000;w=1`)
		w.Header().Set("Ratelimit", `"api";r=999;t=1`)
		_, _ = w.Write(floorAnswer)
	})}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Shutdown(context.Background()) }, nil
}

type floorRLS struct {
	rlsv3.UnimplementedRateLimitServiceServer
}

func (floorRLS) ShouldRateLimit(context.Context, *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	return &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK,
		Statuses: []*rlsv3.RateLimitResponse_DescriptorStatus{{Code: rlsv3.RateLimitResponse_OK, LimitRemaining: 999}}}, nil
}

// serveFloor serves the floor of mode on addr until SIGINT or SIGTERM, or
// for 10 minutes at most.
func serveFloor(mode, addr string) error {
	addr, stop, err := startFloorOn(mode, addr)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(os.Stderr, "load: floor (%s) on %s\n", mode, addr)
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Minute):
	}
	return nil
}
