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

// Option configures a Backend. Options are applied in order; a later option
// of the same kind wins.
//
// Options follow the project's one rule (see package core): a zero value
// (0, 0s, nil) means the option's default, and a value out of the
// documented range is refused at construction, never clamped or ignored.
// New returns an error naming the option: a misconfiguration stops the
// program at start.
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

// WithBudget sets the latency budget of one primary call (default
// DefaultBudget, 50 ms). The call's context carries it, as a wait limit
// for a primary that honours one (core.Bounded) and as a deadline
// otherwise, and the wrapper stops waiting when it passes even if the
// primary ignores its context; a caller whose context has a deadline within
// the budget already (Envoy's rate-limit calls have 20 ms by default) has
// its context passed on as it is, and a caller's earlier wait limit is the
// call's budget. Zero selects DefaultBudget; a negative budget is refused.
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

// WithFailOpen makes a check the primary cannot answer admitted: every
// decision has Allowed true, Remaining 0 and zero durations, and a Report
// attached with WithReport says core.SourceFailOpen. Nothing limits traffic while
// the primary is down.
func WithFailOpen() Option {
	return func(c *config) { c.mode, c.fallback = modeOpen, nil }
}

// WithFailClosed makes a check the primary cannot answer denied: every
// decision has Allowed false, Remaining 0, and a RetryAfter equal to the time
// until the breaker next lets a check reach the primary (the next probe while
// it is open, the cooldown otherwise). Nothing is admitted while the primary
// is down.
func WithFailClosed() Option {
	return func(c *config) { c.mode, c.fallback = modeClosed, nil }
}

// WithFallback makes checks and peeks the primary cannot answer go to b,
// usually an in-memory store, with the same policies. The fallback knows
// nothing of the primary's state and each instance has its own, so while the
// primary is down a fleet of N instances admits up to N times each limit,
// and whatever the fallback admitted is not counted by the primary once it
// is back. Checks return to the primary by themselves when a probe succeeds.
// A nil b is ignored.
func WithFallback(b core.Backend) Option {
	return func(c *config) {
		if b != nil {
			c.mode, c.fallback = modeFallback, b
		}
	}
}

// WithBreaker sets the circuit breaker: it opens after threshold consecutive
// failures (default 5) and then sends one probe per
// cooldown (default 1 s) until one succeeds. A zero value
// selects its default; a negative one is refused.
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

// WithClock sets the clock the breaker and the log rate limit read (default
// time.Now, whose monotonic reading keeps cooldowns exact across steps of
// the wall clock). The deny cache uses the instant each check is given, not
// this clock. Tests pass the same ManualClock as the Limiter's. A nil clock is
// ignored.
func WithClock(clk core.Clock) Option {
	return func(c *config) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// WithLogger logs failures and breaker state changes to l, at most one line
// per every (10 s when every is zero; a negative every
// is refused);
// the next line written says how many were suppressed. The line announcing
// that the breaker closed again is always written. Without this option
// nothing is logged.
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

// WithMaxAbandoned bounds the primary calls abandoned at the budget that may
// still be running (default 1024). Beyond it, calls
// fail at once with ErrOverloaded instead of starting another goroutine, so a
// primary that never returns cannot pile up goroutines. Zero selects the
// default; a negative n is refused.
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
// (4096 when entries is zero; a negative size is refused).
// When the primary
// denies a check of cost 1 under all its policies (or of any cost under
// fixed windows only), the same check is denied locally, with the primary's
// exact answer counted down, until the earliest RetryAfter of the denying
// policies passes, without a round trip. See the package documentation for
// what it guarantees. Off by default.
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
