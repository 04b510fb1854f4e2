package resilient

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
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

func (c *config) fail(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf("resilient: "+format, args...)
	}
}

type config struct {
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
	denyCache    int   // entries; 0 means off
	err          error // the first invalid option
}

func defaults() config {
	return config{
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
	return func(c *config) {
		switch {
		case d < 0:
			c.fail("WithBudget(%v): want 0 (the default) or more", d)
		case d > 0:
			c.budget = d
		default:
			c.budget = DefaultBudget
		}
	}
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
			c.fail("WithBreaker(%d, %v): want 0 (the default) or more for both", threshold, cooldown)
			return
		}
		c.threshold, c.cooldown = defaultFailureThreshold, defaultCooldown
		if threshold > 0 {
			c.threshold = threshold
		}
		if cooldown > 0 {
			c.cooldown = cooldown
		}
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
		if every < 0 {
			c.fail("WithLogger(%v): want an interval of 0 (the default) or more", every)
			return
		}
		c.logger = l
		if every > 0 {
			c.logEvery = every
		} else {
			c.logEvery = defaultLogInterval
		}
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
	return func(c *config) {
		switch {
		case n < 0:
			c.fail("WithMaxAbandoned(%d): want 0 (the default) or more", n)
		case n > 0:
			c.maxAbandoned = n
		default:
			c.maxAbandoned = defaultMaxAbandoned
		}
	}
}

// WithDenyCache turns on the local deny cache with room for entries checks
// (0: 4096; negative: refused): a check the primary denied is denied
// locally, with the primary's answer counted down, until its RetryAfter.
func WithDenyCache(entries int) Option {
	return func(c *config) {
		if entries < 0 {
			c.fail("WithDenyCache(%d): want 0 (the default size) or more", entries)
			return
		}
		if entries == 0 {
			entries = defaultDenyCacheSize
		}
		c.denyCache = entries
	}
}

// monotonic is the default clock: time.Now, with its monotonic reading, so
// that the breaker's cooldowns and the log interval measure elapsed time.
type monotonic struct{}

func (monotonic) Now() time.Time { return time.Now() }
