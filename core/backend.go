package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Backend stores rate-limit state and decides checks atomically. Stores in
// core/memstore and core/redisstore implement it, and so do the wrappers in
// core/resilient and core/lease; the conformance suite in core/backendtest
// defines what "implements" means.
//
// Every method is safe for concurrent use. Implementations validate their
// arguments with ValidateItems and return the typed errors of this package
// before touching any state.
type Backend interface {
	// Do decides a batch of items at instant now, atomically, and writes
	// one decision per item into out, which has len(items) elements.
	//
	// A batch of OpConsume items is all or nothing: either every item's
	// policy admits its Cost for its key and each consumes it, or nothing
	// changes at all. A denied batch writes nothing: every decision reports
	// the state as it stands, with Delay zero; items that had room report
	// Allowed with a zero RetryAfter, the others the exact RetryAfter of
	// their policy. Items that share a state (the same key and a policy of
	// the same Identity) are one state and consume once.
	//
	// A batch of OpPeek items reports each item's state without writing:
	// Remaining and ResetAfter as they stand, Allowed and RetryAfter for a
	// cost of 1.
	//
	// A batch of OpRefund or OpCharge items is never denied: it applies
	// every item (once per shared state) and reports each state afterwards
	// as OpPeek does. Each item is applied atomically; the Redis store
	// applies the whole batch in one step.
	//
	// An operation a store does not implement, or a batch mixing
	// operations it cannot decide together, fails with an error matching
	// ErrUnsupported before anything changes.
	Do(ctx context.Context, items []Item, now time.Time, out []Decision) error
	// Reset forgets the state of key under the given policies.
	Reset(ctx context.Context, key string, policies []Policy) error
}

// Op is what an Item asks of a Backend.
type Op uint8

const (
	// OpConsume checks the item's Cost and consumes it when the whole
	// batch is admitted. The zero value.
	OpConsume Op = iota
	// OpPeek reports the item's state and writes nothing.
	OpPeek
	// OpRefund gives back Cost units of a charge the key took at the
	// instant At (zero: now), never leaving less than an empty state: GCRA
	// moves its arrival time back by Cost intervals, not before now; the
	// token bucket gains Cost tokens up to its burst; the leaky bucket's
	// level falls by Cost units, down to empty; a fixed window's count falls
	// by Cost while At's window is the current one, and not after; the
	// sliding window counter's count of the window At fell in falls, while
	// that window still counts; the sliding log drops up to Cost of the
	// entries the charge recorded (those at the first timestamp at or after
	// At).
	OpRefund
	// OpCharge consumes Cost units whatever the state, past the limit and
	// past the capacity: the key goes into debt, and later checks are
	// denied, each with its exact RetryAfter, until it is paid off (for the
	// window algorithms, until the window that holds the debt has ended).
	// It settles a cost known only after the work was done. A debt is
	// bounded: at most 10^15 microseconds of refill, or 10^15 units of a
	// window's count; the sliding log keeps at most Limit entries, enough
	// for the same answers. An OpCharge with At set renews the charge taken
	// at At: it gives that charge back as OpRefund does and takes Cost
	// units at now, in one step (a concurrency slot kept past its
	// lifetime: see Concurrency).
	OpCharge
)

// Item is one key under one policy in a batch (Backend.Do): a policy of a
// check, or one descriptor of an Envoy rate-limit request, each with a key
// and a limit of its own.
type Item struct {
	Key    string
	Policy Policy
	// Cost is the units an OpConsume item consumes: at least 1 and at most
	// the policy's capacity. OpRefund and OpCharge need at least 1 and have
	// no upper bound. OpPeek ignores it.
	Cost int
	Op   Op
	// At is, for OpRefund, the instant of the charge refunded: the window
	// algorithms refund only the window it fell in. The zero value means
	// the batch's now. For OpCharge, the instant of the charge it renews,
	// if any. Other operations ignore it.
	At time.Time
}

// ErrUnsupported reports an operation, or a mix of operations in one batch,
// that a Backend does not implement. Nothing was changed.
var ErrUnsupported = errors.New("core: operation not supported by this backend")

// Bounded is the one optional interface a Backend may implement: it says
// that none of its calls outlasts its context. Once the context is done (its
// deadline passed or it was canceled), or the wait limit it carries
// (WithWaitLimit) has passed, every call returns promptly, with the
// context's error or context.DeadlineExceeded if it had no answer yet,
// however slow or hung its storage is, and it writes nothing into the
// caller's memory after it returned. core/resilient calls such a backend on
// the caller's goroutine and bounds it with a wait limit; any other it calls
// on a goroutine of its own, so that its budget holds even for a backend
// that ignores its context. The memory and Redis stores implement it; a
// wrapper implements it by asking what it wraps, and passes each call's
// context on unchanged.
type Bounded interface {
	// Bounded reports whether every call returns as above.
	Bounded() bool
}

// IsBounded reports whether b implements Bounded and says yes.
func IsBounded(b Backend) bool {
	bb, ok := b.(Bounded)
	return ok && bb.Bounded()
}

// MaxKeyLen bounds the length of a key in bytes.
const MaxKeyLen = 64 << 10

// ValidateKey returns an error matching ErrInvalidKey for an empty key or one longer than
// MaxKeyLen. Keys are otherwise opaque bytes.
func ValidateKey(key string) error {
	if key == "" {
		return errEmptyKey
	}
	if len(key) > MaxKeyLen {
		return errLongKey
	}
	return nil
}

// ValidateReset validates the arguments of Backend.Reset: a valid key
// (ValidateKey), at least one policy (ErrNoPolicy), every policy valid.
func ValidateReset(key string, policies []Policy) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if len(policies) == 0 {
		return ErrNoPolicy
	}
	for _, p := range policies {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// ValidateItems validates a batch: at least one item (ErrNoPolicy), every
// key and policy valid, every OpConsume item's Cost at least 1 and within
// its policy's capacity (OpRefund and OpCharge: at least 1), the same Cost
// for items that share a state, and one operation for the whole batch (ErrUnsupported otherwise:
// no store decides mixed batches yet). It returns the first problem as a
// typed error.
func ValidateItems(items []Item) error {
	if len(items) == 0 {
		return ErrNoPolicy
	}
	op := items[0].Op
	for i := range items {
		it := &items[i]
		if err := ValidateKey(it.Key); err != nil {
			return err
		}
		if err := it.Policy.Validate(); err != nil {
			return err
		}
		switch it.Op {
		case OpConsume:
			if err := it.Policy.CheckCost(it.Cost); err != nil {
				return err
			}
		case OpPeek:
		case OpRefund, OpCharge:
			if it.Cost < 1 {
				return &CostError{Policy: it.Policy.Name, Cost: it.Cost, Capacity: it.Policy.Capacity(), Err: ErrInvalidCost}
			}
		default:
			return fmt.Errorf("%w: operation %d", ErrUnsupported, it.Op)
		}
		if it.Op != op {
			return fmt.Errorf("%w: items %d and %d ask for different operations", ErrUnsupported, 0, i)
		}
	}
	if op != OpPeek && !sameCost(items) {
		for i := range items {
			for j := range i {
				a, b := &items[j], &items[i]
				if a.Cost != b.Cost && a.Key == b.Key && a.Policy.Identity() == b.Policy.Identity() {
					return fmt.Errorf("%w: items %d and %d share a state (key and policy) and ask for %d and %d units",
						ErrInvalidCost, j, i, a.Cost, b.Cost)
				}
			}
		}
	}
	return nil
}

// sameCost reports whether every item asks for the same Cost.
func sameCost(items []Item) bool {
	for i := 1; i < len(items); i++ {
		if items[i].Cost != items[0].Cost {
			return false
		}
	}
	return true
}

// Check is Backend.Do for one key under every policy at once, each item
// consuming cost: what Limiter.Check asks, for code that holds a Backend
// and its own instant (wrappers, tests). It allocates nothing for up to
// eight policies.
func Check(ctx context.Context, b Backend, key string, policies []Policy, cost int, now time.Time, out []Decision) error {
	return doKeyed(ctx, b, key, policies, cost, OpConsume, now, out)
}

// Peek is Backend.Do for one key under every policy, each item an OpPeek.
func Peek(ctx context.Context, b Backend, key string, policies []Policy, now time.Time, out []Decision) error {
	return doKeyed(ctx, b, key, policies, 0, OpPeek, now, out)
}

// itemBuf is pooled space for the items of Check and Peek: a Backend is
// an interface, so the slice it is given cannot live on the caller's stack.
type itemBuf struct{ items [8]Item }

var itemPool = sync.Pool{New: func() any { return new(itemBuf) }}

func doKeyed(ctx context.Context, b Backend, key string, policies []Policy, cost int, op Op, now time.Time, out []Decision) error {
	if len(out) < len(policies) {
		return fmt.Errorf("core: out has %d elements for %d policies", len(out), len(policies))
	}
	var items []Item
	var buf *itemBuf
	if len(policies) <= len(buf.items) {
		buf = itemPool.Get().(*itemBuf)
		items = buf.items[:len(policies)]
	} else {
		items = make([]Item, len(policies))
	}
	for i := range policies {
		items[i] = Item{Key: key, Policy: policies[i], Cost: cost, Op: op}
	}
	err := b.Do(ctx, items, now, out[:len(policies)])
	if buf != nil {
		clear(items)
		itemPool.Put(buf)
	}
	return err
}

var (
	errEmptyKey = fmt.Errorf("%w: key is empty", ErrInvalidKey)
	errLongKey  = fmt.Errorf("%w: key is longer than 65536 bytes", ErrInvalidKey)
)
