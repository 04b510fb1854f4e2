package exampleenv

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
)

// Server serves an example's app on ln until ctx is done, then shuts it
// down and returns nil, or returns the error that stopped it.
type Server func(ctx context.Context, ln net.Listener) error

// Build builds an example's app on a limiter, adding opts (the metrics
// observer) to its middleware's options.
type Build func(limiter *core.Limiter, opts ...ratelimit.Option) (Server, error)

// HTTP turns a builder of an http.Handler into a Build that serves it with
// ServeHTTP.
func HTTP(newApp func(*core.Limiter, ...ratelimit.Option) (http.Handler, error)) Build {
	return func(limiter *core.Limiter, opts ...ratelimit.Option) (Server, error) {
		h, err := newApp(limiter, opts...)
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, ln net.Listener) error { return ServeHTTP(ctx, ln, h) }, nil
	}
}

// Run parses args (see ParseFlags), opens the store, builds the app with the
// metrics observer, listens, reports the address on logw, serves the
// Prometheus metrics on -metrics-addr when it is set, and serves until ctx
// is done.
func Run(ctx context.Context, name string, args []string, logw io.Writer, build Build) error {
	flags, err := ParseFlags(name, args, logw)
	if err != nil {
		return err
	}
	obs, err := NewObservability()
	if err != nil {
		return err
	}
	limiter, closeStore, err := OpenLimiter(ctx, flags, obs.Collector)
	if err != nil {
		return err
	}
	defer closeStore()
	serve, err := build(limiter, obs.Options()...)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", flags.Addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(logw, "listening on http://%s\n", ln.Addr())
	if flags.MetricsAddr == "" {
		return serve(ctx, ln)
	}
	mln, err := net.Listen("tcp", flags.MetricsAddr)
	if err != nil {
		ln.Close()
		return err
	}
	fmt.Fprintf(logw, "metrics on http://%s/metrics\n", mln.Addr())
	metricsDone := make(chan error, 1)
	go func() { metricsDone <- ServeHTTP(ctx, mln, obs.Handler()) }()
	err = serve(ctx, ln)
	if merr := <-metricsDone; err == nil {
		err = merr
	}
	return err
}

// Main is an example's main function: Run with the command line, until
// SIGINT or SIGTERM; it exits with status 1 on error.
func Main(name string, build Build) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, name, os.Args[1:], os.Stderr, build); err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		stop()
		os.Exit(1)
	}
}
