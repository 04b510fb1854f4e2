// Command ratelimit-bench replays a deterministic workload against every
// rate-limiting algorithm and prints, per algorithm, how many checks were
// admitted and how fast the checks ran.
//
// The default workload is the project's seed benchmark: 200,000 checks
// round-robin over 1,000 keys against a policy of 100 per minute, with a
// manual clock starting at Unix 1,700,000,000 and advancing 0.5ms per check,
// on the in-memory store. Because the limiter reads the manual clock, the
// allowed counts are exact and repeatable; only the timings vary with the
// machine.
//
// Usage:
//
//	go run ./cmd/ratelimit-bench [flags]
//
// Flags:
//
//	-checks N            checks to run per algorithm (default 200000)
//	-keys N              keys, checked round-robin (default 1000)
//	-policy P            policy in the ParsePolicy grammar (default "100/1m");
//	                     each row replaces its algorithm
//	-step D              manual clock advance after each check (default 500µs)
//	-start T             clock start: Unix seconds or RFC 3339 (default 1700000000)
//	-algorithms LIST     comma-separated algorithms (default all six)
//	-json                print one JSON document instead of the table
//	-plot FILE           also write an SVG plot of admitted checks over
//	                     (simulated) time, one curve per algorithm
//	-backend NAME        memory (default) or redis
//	-redis URL           Redis URL, for -backend redis
//	-redis-cluster LIST  comma-separated Redis Cluster addresses, for -backend redis
//
// Exit status: 0 on success, 2 for a bad flag, 1 when the backend fails.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the parsed command line.
type options struct {
	w          workload
	algorithms []core.Algorithm
	json       bool
	plot       string
	backend    string
	factory    backendFactory
	cfg        backendConfig
}

// errUsage marks errors already reported by the flag package.
var errUsage = errors.New("usage")

// parseFlags reads the command line. Every error it returns is a usage
// error: the caller prints it and exits with status 2.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("ratelimit-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	checks := fs.Int("checks", 200_000, "checks to run per algorithm")
	keys := fs.Int("keys", 1_000, "keys, checked round-robin")
	policy := fs.String("policy", "100/1m", "policy in the ParsePolicy grammar; each row replaces its algorithm")
	step := fs.Duration("step", 500*time.Microsecond, "manual clock advance after each check")
	start := fs.String("start", "1700000000", "clock start: Unix seconds or RFC 3339")
	algs := fs.String("algorithms", "", "comma-separated algorithms (default all six)")
	asJSON := fs.Bool("json", false, "print one JSON document instead of the table")
	plot := fs.String("plot", "", "also write an SVG plot of admitted checks over simulated time to this file")
	backend := fs.String("backend", "memory", "backend: "+strings.Join(knownBackends, " or "))
	redisURL := fs.String("redis", "", "Redis URL, for -backend redis")
	cluster := fs.String("redis-cluster", "", "comma-separated Redis Cluster addresses, for -backend redis")
	if err := fs.Parse(args); err != nil {
		return options{}, errUsage
	}
	if fs.NArg() > 0 {
		return options{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}

	var o options
	switch {
	case *checks <= 0:
		return o, fmt.Errorf("-checks %d: must be at least 1", *checks)
	case *keys <= 0:
		return o, fmt.Errorf("-keys %d: must be at least 1", *keys)
	case *step < 0:
		return o, fmt.Errorf("-step %s: must not be negative", *step)
	}
	p, err := core.ParsePolicy(*policy)
	if err != nil {
		return o, fmt.Errorf("-policy: %w", err)
	}
	t, err := parseStart(*start)
	if err != nil {
		return o, err
	}
	o.w = workload{Checks: *checks, Keys: *keys, Policy: p, Step: *step, Start: t}

	if o.algorithms, err = parseAlgorithms(*algs); err != nil {
		return o, err
	}
	for _, a := range o.algorithms {
		q := p
		q.Algorithm = a
		if err := q.Validate(); err != nil {
			return o, fmt.Errorf("-policy %s under %s: %w", *policy, a, err)
		}
	}

	o.cfg.RedisURL = *redisURL
	if *cluster != "" {
		for addr := range strings.SplitSeq(*cluster, ",") {
			if addr = strings.TrimSpace(addr); addr == "" {
				return o, fmt.Errorf("-redis-cluster %q: empty address", *cluster)
			}
			o.cfg.RedisCluster = append(o.cfg.RedisCluster, strings.TrimSpace(addr))
		}
	}
	if *backend != "redis" && (o.cfg.RedisURL != "" || o.cfg.RedisCluster != nil) {
		return o, fmt.Errorf("-redis and -redis-cluster apply to -backend redis only")
	}
	o.backend = *backend
	if o.factory, err = lookupBackend(o.backend); err != nil {
		return o, fmt.Errorf("-backend: %w", err)
	}
	o.json = *asJSON
	o.plot = *plot
	return o, nil
}

// parseStart reads Unix seconds or an RFC 3339 time.
func parseStart(s string) (time.Time, error) {
	if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
		// Keep the clock within the years the algorithms are exact for.
		if secs < -(1<<33) || secs > 1<<33 {
			return time.Time{}, fmt.Errorf("-start %s: out of range", s)
		}
		return time.Unix(secs, 0).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("-start %q: want Unix seconds or an RFC 3339 time such as 2023-11-14T22:13:20Z", s)
	}
	return t, nil
}

// parseAlgorithms reads a comma-separated list; empty means all six.
func parseAlgorithms(s string) ([]core.Algorithm, error) {
	if strings.TrimSpace(s) == "" {
		return core.Algorithms(), nil
	}
	var out []core.Algorithm
	for name := range strings.SplitSeq(s, ",") {
		a, err := core.ParseAlgorithm(name)
		if err != nil {
			return nil, fmt.Errorf("-algorithms: %w", err)
		}
		if a == core.Concurrency {
			return nil, errors.New("-algorithms: concurrency limits requests in flight, not a rate; the bench measures the six rate algorithms")
		}
		if slices.Contains(out, a) {
			return nil, fmt.Errorf("-algorithms: %s is listed twice", a)
		}
		out = append(out, a)
	}
	return out, nil
}

// run is the whole command, with its streams and arguments as parameters.
// It returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if err != errUsage {
			fmt.Fprintln(stderr, "ratelimit-bench:", err)
		}
		return 2
	}
	b, closeBackend, err := o.factory(o.cfg)
	if err != nil {
		fmt.Fprintf(stderr, "ratelimit-bench: opening backend %s: %v\n", o.backend, err)
		return 1
	}
	if closeBackend != nil {
		defer closeBackend()
	}
	rows := make([]result, 0, len(o.algorithms))
	for _, a := range o.algorithms {
		r, err := measure(ctx, b, o.w, a)
		if err != nil {
			fmt.Fprintln(stderr, "ratelimit-bench:", err)
			return 1
		}
		rows = append(rows, r)
	}
	if o.json {
		err = writeJSON(stdout, o.w, o.backend, rows)
	} else {
		err = writeTable(stdout, o.w, o.backend, rows)
	}
	if err != nil {
		fmt.Fprintln(stderr, "ratelimit-bench:", err)
		return 1
	}
	if o.plot != "" {
		if err := writePlotFile(o.plot, o.w, o.backend, rows); err != nil {
			fmt.Fprintln(stderr, "ratelimit-bench:", err)
			return 1
		}
	}
	return 0
}
