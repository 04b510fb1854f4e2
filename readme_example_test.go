package ratelimit_test

// The Go blocks of README.md, each verbatim the body (or a part of the body)
// of an Example below or in another Example of the repository, so that the
// README compiles; TestMarkdownCompiles checks that every block is found.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/outbound"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// README, Quick start.
func Example_quickStart() {
	store, err := memstore.New() // starts no goroutine; nothing to close
	if err != nil {
		log.Fatal(err) // only an invalid option fails
	}
	limiter := core.NewLimiter(store)
	ctx := context.Background()

	perMinute := core.MustParsePolicy("100/1m;name=api") // GCRA by default
	d, err := limiter.Allow(ctx, "user:42", perMinute)
	if err != nil {
		log.Fatal(err) // a typed error: invalid key, policy or cost
	}
	fmt.Println(d.Allowed, d.Remaining) // when denied, d.RetryAfter is the exact wait

	// Several policies at once, all or nothing: a denial by one consumes from none.
	res, err := limiter.Check(ctx, "user:42", []core.Policy{
		core.MustParsePolicy("10/s;name=burst"),
		core.MustParsePolicy("1000/1h;name=hourly;algorithm=sliding_window"),
	}, 1, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Allowed, res.Policies[res.Binding].Name) // res.Decisions[i] for res.Policies[i]
	// Output:
	// true 99
	// true burst
}

// README, Redis: compiled, not run (it needs a server).
func Example_redis() {
	opts := &redis.Options{Addr: "127.0.0.1:6379"}
	resilient.RedisOptions(opts, resilient.DefaultBudget) // timeouts = budget, no retries, fast reconnect
	primary, err := redisstore.New(redis.NewClient(opts)) // or a ClusterClient, a FailoverClient, a Ring
	if err != nil {
		log.Fatal(err)
	}
	fallback, err := memstore.New(memstore.WithMaxKeys(1_000_000)) // bounded: a key flood cannot exhaust memory
	if err != nil {
		log.Fatal(err)
	}
	store, err := resilient.New(primary,
		resilient.WithFallback(fallback), // or WithFailOpen(), WithFailClosed()
		resilient.WithDenyCache(0))       // opt-in; 0 = default size
	if err != nil {
		log.Fatal(err)
	}
	limiter := core.NewLimiter(store)
	_ = limiter
}

// docs/redis.md, TLS and an ACL user: compiled, not run (it needs a
// server).
func Example_redisTLS() {
	caPEM, err := os.ReadFile("/etc/ratelimit/redis-ca.pem") // the CA that signed Redis's certificate
	if err != nil {
		log.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		log.Fatal("redis-ca.pem holds no certificate")
	}
	opts := &redis.Options{
		Addr:      "redis.internal:6380",
		Username:  "ratelimit", // the ACL user below
		Password:  os.Getenv("REDIS_PASSWORD"),
		TLSConfig: &tls.Config{RootCAs: roots, ServerName: "redis.internal", MinVersion: tls.VersionTLS12},
	}
	resilient.RedisOptions(opts, resilient.DefaultBudget)
	primary, err := redisstore.New(redis.NewClient(opts))
	if err != nil {
		log.Fatal(err)
	}
	_ = primary
}

// README, HTTP middleware.
func Example_middleware() {
	key := keyfuncs.RemoteIP // the client's address: behind a proxy, an IPResolver that trusts it
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(key),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
		ratelimit.WithRoute("GET", "/search", // two policies, one atomic check
			core.MustParsePolicy("10/s;name=search"), core.MustParsePolicy("1000/1h;name=search-hourly")),
		ratelimit.WithSkip(func(r keyfuncs.Request) bool { return r.Path() == "/healthz" }),
	)
	if err != nil {
		log.Fatal(err) // *ratelimit.RouteError, ErrInvalidConfig, an invalid policy...
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "results") })
	handler := stdhttp.Middleware(m)(mux) // wrap the mux itself, so the route table sees its patterns
	_ = handler
}

// userKey is the context key under which authentication middleware stores
// the caller's user ID in the README's examples.
type userKey struct{}

// planKey is where it stores the caller's plan.
type planKey struct{}

// README, keys and policies from the caller.
func Example_plans() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.ContextValue(userKey{})), // 401 when authentication left no user
		ratelimit.WithPlans(func(r keyfuncs.Request) (string, error) {
			plan, _ := r.Context().Value(planKey{}).(string)
			return plan, nil // "" for none: the global policies
		}, map[string][]core.Policy{
			"free": {core.MustParsePolicy("100/1h;name=free")},
			"pro":  {core.MustParsePolicy("10000/1h;name=pro")},
		}),
		ratelimit.WithPolicy(core.MustParsePolicy("10/1h;name=anonymous")),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = m
}

// README, shaping.
func Example_shaping() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("10/s;algorithm=leaky_bucket;name=shaped")),
		ratelimit.WithMaxDelay(500*time.Millisecond), // default 1s; longer waits are denied, Retry-After exact
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = m
}

// docs/waiting.md, an outbound limit: compiled, not run.
func Example_outbound() {
	store, err := memstore.New()
	if err != nil {
		log.Fatal(err)
	}
	transport, err := outbound.New(core.NewLimiter(store), core.MustParsePolicy("5000/1h;name=partner"))
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: transport}
	_ = client
}
