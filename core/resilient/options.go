package resilient

import (
	"log/slog"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// Defaults of the options.
const (
	// DefaultBudget is the latency budget of one primary call.
	DefaultBudget = 50 * time.Millisecond
	// defaultFailureThreshold is the number of consecutive failures that
	// opens the breaker.
	defaultFailureThreshold = 5
	// defaultCooldown is how long the breaker stays open before it sends a
	// probe, and the interval between probes while the primary stays down.
	defaultCooldown = time.Second
	// defaultLogInterval is the shortest interval between two log lines.
	defaultLogInterval = 10 * time.Second
	// defaultMaxAbandoned bounds the primary calls abandoned at the budget
	// that may still be running; beyond it calls fail at once.
	defaultMaxAbandoned = 1024
	// defaultDenyCacheSize is the deny cache's capacity in entries when
	// WithDenyCache is given a size of zero.
	defaultDenyCacheSize = 4096
)

// mode is what the wrapper does when the primary cannot answer a check.
type mode uint8

const (
	modeError mode = iota
	modeOpen
	modeClosed
	modeFallback
)

// Option configures a Backend (see package core for the options' rule).
type Option func(*config)

type config struct {
	opt.Errs
	budget       time.Duration
	mode         mode
	fallback     core.Backend
	threshold    int
	cooldown     time.Duration
	clock        core.Clock
	logger       *slog.Logger
	logEvery     time.Duration
	onEvent      func(PrimaryEvent)
	maxAbandoned int
	denyCache    int // entries; 0 means off
}

func defaults() config {
	return config{
		Errs:         opt.Errs{Pkg: "resilient"},
		budget:       DefaultBudget,
		threshold:    defaultFailureThreshold,
		cooldown:     defaultCooldown,
		clock:        monotonic{},
		logEvery:     defaultLogInterval,
		maxAbandoned: defaultMaxAbandoned,
	}
}

// WithBudget sets the latency budget of one primary call (0: DefaultBudget,
// 50 ms; negative: refused). The wrapper stops waiting when it passes, even
// if the primary ignores its context; a caller's sooner deadline or wait
// limit is the call's budget.
func WithBudget(d time.Duration) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.budget, "WithBudget", d, DefaultBudget) }
}

// WithFailOpen admits a check the primary cannot answer (Allowed true,
// Remaining 0, core.SourceFailOpen).
func WithFailOpen() Option {
	return func(c *config) { c.mode, c.fallback = modeOpen, nil }
}

// WithFailClosed denies a check the primary cannot answer, with RetryAfter
// the time until the breaker next lets a check reach the primary.
func WithFailClosed() Option {
	return func(c *config) { c.mode, c.fallback = modeClosed, nil }
}

// WithFallback sends checks and peeks the primary cannot answer to b,
// usually an in-memory store, with the same policies: each instance then
// limits on its own (N instances admit up to N times each limit), and
// checks return to the primary once a probe succeeds. A nil b is ignored.
func WithFallback(b core.Backend) Option {
	return func(c *config) {
		if b != nil {
			c.mode, c.fallback = modeFallback, b
		}
	}
}

// WithBreaker sets the circuit breaker: it opens after threshold
// consecutive failures (0: 5) and sends one probe per cooldown (0: 1 s)
// until one succeeds. Negative values are refused.
func WithBreaker(threshold int, cooldown time.Duration) Option {
	return func(c *config) {
		if threshold < 0 || cooldown < 0 {
			c.Fail("WithBreaker(%d, %v): want 0 (the default) or more for both", threshold, cooldown)
			return
		}
		opt.Count(&c.Errs, &c.threshold, "WithBreaker", threshold, defaultFailureThreshold)
		opt.Count(&c.Errs, &c.cooldown, "WithBreaker", cooldown, defaultCooldown)
	}
}

// WithClock sets the clock the breaker and the log throttle read (default
// time.Now). A nil clock is ignored.
func WithClock(clk core.Clock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// WithLogger logs failures and breaker state changes to l, at most one line
// per every (0: 10 s; negative: refused), saying how many were suppressed;
// the breaker closing again is always logged. Nothing is logged without it.
func WithLogger(l *slog.Logger, every time.Duration) Option {
	return func(c *config) {
		c.logger = l
		opt.Count(&c.Errs, &c.logEvery, "WithLogger", every, defaultLogInterval)
	}
}

// WithEvents calls fn for every breaker state change, every primary failure
// and every late result of an abandoned call. fn is called synchronously,
// possibly from several goroutines at once, and must return quickly.
func WithEvents(fn func(PrimaryEvent)) Option {
	return func(c *config) { c.onEvent = fn }
}

// WithMaxAbandoned bounds the calls abandoned at the budget that may still
// run in the primary (0: 1024; negative: refused); beyond it, calls fail
// with ErrOverloaded at once.
func WithMaxAbandoned(n int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.maxAbandoned, "WithMaxAbandoned", n, defaultMaxAbandoned) }
}

// WithDenyCache turns on the local deny cache with room for entries checks
// (0: 4096; negative: refused): a check the primary denied is denied
// locally, with the primary's answer counted down, until its RetryAfter.
func WithDenyCache(entries int) Option {
	return func(c *config) { opt.Count(&c.Errs, &c.denyCache, "WithDenyCache", entries, defaultDenyCacheSize) }
}

// monotonic is the default clock: time.Now, with its monotonic reading, so
// that the breaker's cooldowns and the log interval measure elapsed time.
type monotonic struct{}

func (monotonic) Now() time.Time { return time.Now() }
