package exampleenv

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ratelimit-go/ratelimit/core/resilient"
)

// DefaultAddr is the listen address of the examples unless -addr says
// otherwise: loopback only.
const DefaultAddr = "127.0.0.1:8080"

// Flags are the examples' command-line settings.
type Flags struct {
	// Addr is the listen address, -addr; default DefaultAddr.
	Addr string
	// RedisURL is the Redis to keep rate-limit state in, -redis
	// ("redis://127.0.0.1:6379/0"); "" keeps it in memory.
	RedisURL string
	// Budget is the longest a check waits for Redis, -redis-budget; default
	// resilient.DefaultBudget (50ms).
	Budget time.Duration
	// OnFailure is what a check does when Redis fails or the budget runs out,
	// -on-redis-failure: "fallback" (the default: an in-memory limiter with
	// the same policies, per instance), "open" (admit) or "closed" (deny).
	OnFailure string
	// MetricsAddr is where the Prometheus metrics are served, at /metrics,
	// -metrics-addr; "" (the default) serves none.
	MetricsAddr string
}

// ParseFlags parses the arguments of the example called name. Usage and
// errors go to out; -h gives flag.ErrHelp.
func ParseFlags(name string, args []string, out io.Writer) (Flags, error) {
	var f Flags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&f.Addr, "addr", DefaultAddr, "listen address")
	fs.StringVar(&f.RedisURL, "redis", "", "Redis URL for shared rate-limit state, e.g. redis://127.0.0.1:6379/0 (default: in memory)")
	fs.DurationVar(&f.Budget, "redis-budget", resilient.DefaultBudget, "the longest a check waits for Redis")
	fs.StringVar(&f.OnFailure, "on-redis-failure", "fallback", "when Redis fails or is slow: fallback (in-memory limiter), open (admit) or closed (deny)")
	fs.StringVar(&f.MetricsAddr, "metrics-addr", "", "serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9090 (default: none)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	switch {
	case f.Budget <= 0:
		return f, fmt.Errorf("-redis-budget %v: must be positive", f.Budget)
	case f.OnFailure != "fallback" && f.OnFailure != "open" && f.OnFailure != "closed":
		return f, fmt.Errorf("-on-redis-failure %q: want fallback, open or closed", f.OnFailure)
	}
	return f, nil
}
