// Command ratelimitd is the rate limiter as a service: an HTTP JSON API
// (POST /v1/check, GET /v1/inspect, POST /v1/reset, /healthz, /readyz,
// /metrics), the forward-auth endpoints of nginx, Caddy and Traefik
// (/v1/forward-auth/{name}) and Envoy's gRPC rate-limit service
// (ShouldRateLimit), over the
// memory store or Redis, configured by one YAML file that is reloaded when
// it changes or on SIGHUP.
//
//	go run ./cmd/ratelimitd [-config FILE] [-http 127.0.0.1:8080] [-grpc 127.0.0.1:8081] [-redis URL]
//
// Each flag has an environment variable of the same meaning, used when the
// flag is not given: RATELIMITD_CONFIG, RATELIMITD_HTTP, RATELIMITD_GRPC
// (empty disables gRPC), RATELIMITD_REDIS. It listens on loopback unless
// told otherwise, logs JSON lines (log/slog) to standard error, and on
// SIGTERM or SIGINT stops accepting, lets requests in flight finish (at most
// 10 s) and exits.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	goruntime "runtime"
	"syscall"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	keepHeapFloor(os.LookupEnv)
	if err := run(ctx, os.Args[1:], os.LookupEnv, os.Stderr, hup, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "ratelimitd:", err)
		}
		os.Exit(1)
	}
}

// options are the command line, each flag defaulting to its environment
// variable.
type options struct {
	config, httpAddr, grpcAddr, redis string
}

func parseFlags(args []string, lookupEnv func(string) (string, bool), out io.Writer) (options, error) {
	env := func(name, def string) string {
		if v, ok := lookupEnv(name); ok {
			return v
		}
		return def
	}
	var o options
	fs := flag.NewFlagSet("ratelimitd", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.config, "config", env("RATELIMITD_CONFIG", ""), "configuration file (YAML); none: the memory store and no policy (env RATELIMITD_CONFIG)")
	fs.StringVar(&o.httpAddr, "http", env("RATELIMITD_HTTP", "127.0.0.1:8080"), "HTTP listen address (env RATELIMITD_HTTP)")
	fs.StringVar(&o.grpcAddr, "grpc", env("RATELIMITD_GRPC", "127.0.0.1:8081"), "gRPC listen address, empty disables it (env RATELIMITD_GRPC)")
	fs.StringVar(&o.redis, "redis", env("RATELIMITD_REDIS", ""), "Redis URL, replacing the configuration's backend (env RATELIMITD_REDIS)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.httpAddr == "" {
		return o, errors.New("-http: an address is required")
	}
	return o, nil
}

// listening reports the bound addresses, for tests.
type listening struct {
	HTTP, GRPC string
}

// run is the whole service: it returns when ctx ends (after a graceful
// shutdown) or when a server fails. hup carries reload requests; ready,
// when not nil, receives the bound addresses once serving.
func run(ctx context.Context, args []string, lookupEnv func(string) (string, bool), logw io.Writer, hup <-chan os.Signal, ready chan<- listening) error {
	o, err := parseFlags(args, lookupEnv, logw)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(logw, nil))
	s, err := newService(o.config, o.redis, log)
	if err != nil {
		return err
	}
	defer s.close()
	rt := s.cfg.Load()
	if o.config == "" {
		log.Info("no configuration: no policy, backend "+s.store.desc+"; give -config to configure", "backend", s.store.desc)
	} else {
		log.Info("configuration loaded", "file", o.config, "backend", s.store.desc, "policies", len(rt.policies), "domains", len(rt.domains))
	}
	if err := s.store.unreachable; err != nil {
		log.Warn("Redis does not answer at start; serving as backend.on_failure says until it does", "backend", s.store.desc, "on_failure", rt.backend.OnFailure, "error", err.Error())
	}

	hl, err := net.Listen("tcp", o.httpAddr)
	if err != nil {
		return err
	}
	handler := s.handler()
	if handlerHook != nil {
		handler = handlerHook(handler)
	}
	httpSrv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
		// net/http's own messages (a refused TLS handshake, a client
		// without a certificate under mTLS) as JSON lines too.
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errs := make(chan error, 3)
	if rt.tls != nil {
		httpSrv.TLSConfig = s.listenerConfig("h2", "http/1.1")
		go func() { errs <- httpSrv.ServeTLS(hl, "", "") }()
	} else {
		go func() { errs <- httpSrv.Serve(hl) }()
	}
	addrs := listening{HTTP: hl.Addr().String()}
	var grpcSrv *grpc.Server
	if o.grpcAddr != "" {
		gl, err := net.Listen("tcp", o.grpcAddr)
		if err != nil {
			_ = httpSrv.Close()
			return err
		}
		gopts := []grpc.ServerOption{grpc.MaxRecvMsgSize(rt.limits.body), grpc.ConnectionTimeout(5 * time.Second)}
		if rt.tls != nil {
			gopts = append(gopts, grpc.Creds(credentials.NewTLS(s.listenerConfig("h2"))))
		}
		grpcSrv = grpc.NewServer(append(gopts,
			// A fixed pool of stream workers instead of a goroutine per call:
			// a worker keeps the stack a call grew, where a new goroutine
			// grows (copies) its stack on every call. A call waiting on
			// Redis holds its worker, so the pool covers the calls in flight,
			// not the CPUs: with 2 workers, 64 clients on one Redis spent
			// 19% of the service's CPU growing stacks in a CPU profile; with
			// 64, 3%.
			grpc.NumStreamWorkers(uint32(max(64, 32*goruntime.GOMAXPROCS(0)))),
			grpc.MaxConcurrentStreams(maxStreamsPerConn))...)
		rlsv3.RegisterRateLimitServiceServer(grpcSrv, &rlsServer{s: s})
		go func() { errs <- grpcSrv.Serve(gl) }()
		addrs.GRPC = gl.Addr().String()
	}
	log.Info("serving", "http", addrs.HTTP, "grpc", addrs.GRPC, "transport", rt.tls.mode())

	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	// Watching before saying so: a file changed once the service is
	// serving must reload it.
	go s.watch(watchCtx, hup, s.newWatcher())
	if ready != nil {
		ready <- addrs
	}

	select {
	case <-ctx.Done():
	case err := <-errs:
		if !errors.Is(err, http.ErrServerClosed) {
			_ = httpSrv.Close()
			if grpcSrv != nil {
				grpcSrv.Stop()
			}
			return err
		}
	}
	log.Info("shutting down: requests in flight may finish")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stopped := make(chan struct{})
	if grpcSrv != nil {
		go func() {
			grpcSrv.GracefulStop()
			close(stopped)
		}()
	} else {
		close(stopped)
	}
	err = httpSrv.Shutdown(sctx)
	select {
	case <-stopped:
	case <-sctx.Done():
		grpcSrv.Stop()
	}
	log.Info("stopped")
	return err
}

// handlerHook, when set (by tests, before run), wraps the HTTP server's
// handler: it sees every request that enters a handler.
var handlerHook func(http.Handler) http.Handler
