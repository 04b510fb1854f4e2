package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/redact"
	"github.com/ratelimit-go/ratelimit/metrics"
)

// clock is what the service's limiters read: the system clock. The
// end-to-end tests, which run the service in their own process, shift it
// (see TestMain).
var clock core.Clock = core.SystemClock()

// store is the service's backend: the memory store, or Redis behind
// core/resilient with the configured budget and failure mode.
type store struct {
	limiter *core.Limiter
	ping    func(context.Context) error // readiness: the backend answers within its budget
	close   func() error
	desc    string // for the logs: "memory" or the Redis addresses
	// unreachable is why Redis did not answer the start's probe, nil when
	// it did: the service starts all the same, and logs it.
	unreachable error
}

// openStore builds the backend spec describes, feeding c.
func openStore(spec backendSpec, memoryKeys int, c *metrics.Collector, log *slog.Logger) (*store, error) {
	if spec.URL == "memory" {
		m, err := memstore.New(memstore.WithMaxKeys(memoryKeys))
		if err != nil {
			return nil, err
		}
		if err := c.Watch("memory", m); err != nil {
			return nil, err
		}
		return &store{limiter: core.NewLimiter(m, core.WithClock(clock)), ping: func(context.Context) error { return nil }, close: func() error { return nil }, desc: "memory"}, nil
	}
	client, desc, err := redisClient(spec)
	if err != nil {
		return nil, err
	}
	// One script call in flight, not the library's four: the service's own
	// CPU, not Redis, bounds its throughput, and checks that queue behind
	// the call in flight go out together next (a pipeline of calls when
	// more queue than one call decides), so fewer, fuller calls cost both
	// sides less per check (scripts/bench-service.sh; the figures are in
	// the README's section "Load").
	opts := []redisstore.Option{redisstore.WithPipelines(1)}
	if _, ok := client.(*redis.ClusterClient); ok {
		// Every descriptor of one Envoy request must be decided in one
		// script call, so a domain's keys share a slot.
		opts = append(opts, redisstore.WithSlotKey(domainOfKey))
	}
	primary, err := redisstore.New(client, opts...)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	unreachable, err := probeRedis(primary, desc)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	fallback, err := memstore.New(memstore.WithMaxKeys(1_000_000))
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	// The wrapper logs failures (the fallback taking over) and the breaker
	// closing again (Redis back), at most one line per 10 s.
	ropts := []resilient.Option{resilient.WithBudget(spec.Budget), resilient.WithEvents(c.ResilientEvents()), resilient.WithLogger(log, 0)}
	switch spec.OnFailure {
	case "open":
		ropts = append(ropts, resilient.WithFailOpen())
	case "closed":
		ropts = append(ropts, resilient.WithFailClosed())
	default:
		ropts = append(ropts, resilient.WithFallback(fallback))
	}
	if spec.DenyCache > 0 {
		ropts = append(ropts, resilient.WithDenyCache(spec.DenyCache))
	}
	b, err := resilient.New(c.Backend(primary), ropts...)
	if err != nil {
		_ = client.Close()
		return nil, err
	}
	if err := errors.Join(c.Watch("redis", b), c.Watch("fallback", fallback)); err != nil {
		_ = client.Close()
		return nil, err
	}
	ping := func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, spec.Budget)
		defer cancel()
		return client.Ping(ctx).Err()
	}
	return &store{limiter: core.NewLimiter(b, core.WithClock(clock)), ping: ping, close: client.Close, desc: desc, unreachable: unreachable}, nil
}

// domainOfKey is the slot key of a state key: its domain, the part before
// the first '|' (see domain.match).
func domainOfKey(key string) string {
	if i := strings.IndexByte(key, '|'); i >= 0 {
		return key[:i]
	}
	return key
}

// redisClient builds the go-redis client of a backend URL, with
// resilient.RedisOptions for the budget.
func redisClient(spec backendSpec) (redis.UniversalClient, string, error) {
	tc, err := spec.TLS.config()
	if err != nil {
		return nil, "", fmt.Errorf("backend tls: %w", err)
	}
	pw := func(fromURL string) string {
		if spec.Password.v != "" {
			return spec.Password.v
		}
		return fromURL
	}
	switch {
	case strings.HasPrefix(spec.URL, "redis-cluster://"), strings.HasPrefix(spec.URL, "redis-sentinel://"):
		u, err := url.Parse(spec.URL)
		if err != nil {
			return nil, "", fmt.Errorf("backend url: %w", redact.Error(err)) // url.Error quotes the URL, password included
		}
		addrs := strings.Split(u.Host, ",")
		password, _ := u.User.Password()
		if u.Scheme == "redis-cluster" {
			o := &redis.ClusterOptions{Addrs: addrs, Username: u.User.Username(), Password: pw(password), TLSConfig: tc}
			resilient.RedisOptions(o, spec.Budget)
			return redis.NewClusterClient(o), "cluster " + u.Host + tlsDesc(tc), nil
		}
		master := strings.Trim(u.Path, "/")
		if master == "" {
			return nil, "", errors.New("backend url: redis-sentinel:// needs the master's name as its path")
		}
		o := &redis.FailoverOptions{MasterName: master, SentinelAddrs: addrs, Username: u.User.Username(), Password: pw(password),
			SentinelPassword: spec.SentinelPassword.v, TLSConfig: tc}
		resilient.RedisOptions(o, spec.Budget)
		return redis.NewFailoverClient(o), "sentinel " + u.Host + " master " + master + tlsDesc(tc), nil
	}
	o, err := redis.ParseURL(spec.URL)
	if err != nil {
		return nil, "", fmt.Errorf("backend url: %w", redact.Error(err))
	}
	o.Password = pw(o.Password)
	if tc != nil {
		if tc.ServerName == "" && o.TLSConfig != nil {
			tc.ServerName = o.TLSConfig.ServerName // the URL's host, as go-redis sets it
		}
		o.TLSConfig = tc
	}
	resilient.RedisOptions(o, spec.Budget)
	return redis.NewClient(o), "redis " + o.Addr + tlsDesc(o.TLSConfig), nil
}

// tlsDesc is " over TLS" when c is set, for the logs.
func tlsDesc(c *tls.Config) string {
	if c == nil {
		return ""
	}
	return " over TLS"
}

// probePolicies are one policy of every algorithm, so that the probe runs
// every command the store's script sends.
var probePolicies = func() []core.Policy {
	var ps []core.Policy
	for _, a := range []string{"gcra", "token_bucket", "leaky_bucket", "fixed_window", "sliding_window", "sliding_log"} {
		ps = append(ps, core.MustParsePolicy("1000/1s;algorithm="+a+";name=ratelimitd-probe-"+a))
	}
	return ps
}()

// probeTimeout bounds the start's probe of Redis.
const probeTimeout = 5 * time.Second

// probeRedis checks a Redis backend at start with what every check does:
// one script call over every algorithm, and a reset. A refused password,
// a TLS failure or a missing ACL permission is a configuration error that
// no retry heals, so it fails the start (err) whatever on_failure says. A
// Redis that does not answer is returned as unreachable: the service
// starts and answers as on_failure says until Redis is back, and /readyz
// says so.
func probeRedis(b core.Backend, desc string) (unreachable, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	l := core.NewLimiter(b, core.WithClock(clock))
	_, err = l.Check(ctx, "ratelimitd-probe", probePolicies, 1, nil)
	if err == nil {
		err = l.Reset(ctx, "ratelimitd-probe", probePolicies...)
	}
	if err == nil {
		return nil, nil
	}
	if why := redisConfigError(err); why != "" {
		return nil, fmt.Errorf("backend %s: %s", desc, why)
	}
	return redact.Error(err), nil
}

// redisConfigError describes err when it is one no retry heals (a refused
// password, TLS, an ACL permission), "" otherwise. It never quotes a
// secret: Redis's own messages name no password.
func redisConfigError(err error) string {
	msg := err.Error()
	after := func(sub string) string { return msg[strings.Index(msg, sub):] }
	var rh tls.RecordHeaderError
	switch {
	case strings.Contains(msg, "x509: "):
		return "TLS: the server's certificate is not trusted (" + after("x509: ") + "); check backend.tls.ca_file and server_name"
	case errors.As(err, &rh), strings.Contains(msg, "first record does not look like a TLS handshake"):
		return "TLS: the server does not speak TLS on this port"
	case strings.Contains(msg, "tls: "):
		return "TLS: " + after("tls: ")
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "invalid username-password"):
		return "Redis refused the user name or password (WRONGPASS)"
	case strings.Contains(msg, "NOPERM"):
		return "the Redis user lacks a permission the store needs: " + after("NOPERM") + " (see the ACL line in docs/redis.md)"
	case strings.Contains(msg, "can't run this command or subcommand"):
		// A command the script runs, refused by the ACL; Redis's ACL LOG
		// names it.
		return "the Redis user lacks a permission the store needs: a command its script runs is refused (" + after("The user") + "); ACL LOG names the command, and docs/redis.md the ACL line"
	}
	return ""
}
