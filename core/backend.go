package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Backend stores rate-limit state and decides checks atomically: the stores
// in core/memstore and core/redisstore, the wrappers in core/resilient and
// core/lease. The conformance suite, core/backendtest, defines what
// implementing it means. Do is safe for concurrent use and answers invalid
// arguments (ValidateItems) with this package's typed errors, changing
// nothing.
type Backend interface {
	// Do decides a batch of items at instant now, atomically, writing one
	// decision per item into out (len(items) elements).
	//
	// OpConsume items are all or nothing: every item's policy admits its
	// Cost and each consumes it, or nothing changes and every decision
	// reports the state as it stands (Delay zero; items that had room
	// Allowed, the others with their exact RetryAfter). Items sharing a
	// state (key and policy Identity) consume once. OpPeek items report
	// each state without writing (Allowed and RetryAfter for a cost of 1).
	// OpRefund and OpCharge items are never denied: each is applied once
	// per state and reported as OpPeek does. OpReset items forget their
	// states and are reported as the zero Decision. An operation or mix a
	// store does not implement fails with ErrUnsupported, changing nothing.
	Do(ctx context.Context, items []Item, now time.Time, out []Decision) error
}

// Op is what an Item asks of a Backend.
type Op uint8

const (
	// OpConsume checks the item's Cost and consumes it when the whole
	// batch is admitted. The zero value.
	OpConsume Op = iota
	// OpPeek reports the item's state and writes nothing.
	OpPeek
	// OpRefund gives back Cost units of a charge taken at the instant At
	// (zero: now), never leaving less than an empty state. The window
	// algorithms refund only while At's window still counts; the sliding
	// log drops up to Cost entries of the charge (those at the first
	// timestamp at or after At).
	OpRefund
	// OpCharge consumes Cost units whatever the state, past the limit: the
	// key goes into debt and later checks are denied, each with its exact
	// RetryAfter, until it is paid off (a debt is at most 10^15 µs of
	// refill or units of a window's count). With At set it renews the
	// charge taken at At: refunds it and charges Cost at now, in one step.
	OpCharge
	// OpReset forgets the item's state, so that its next check starts from
	// a full quota. It ignores Cost.
	OpReset
)

// Item is one key under one policy in a batch (Backend.Do).
type Item struct {
	Key    string
	Policy Policy
	// Cost is the units an OpConsume item consumes: at least 1 and at most
	// the policy's capacity. OpRefund and OpCharge need at least 1 and have
	// no upper bound. OpPeek and OpReset ignore it.
	Cost int
	Op   Op
	// At is the instant of the charge an OpRefund gives back or an
	// OpCharge renews; zero means now. Other operations ignore it.
	At time.Time
}

// set makes it an item of key under p: field by field, for assigning a
// whole Item or Policy to pooled memory calls typedmemmove, and copying one
// built on the stack stalls on its narrow stores. At is left as it is: no
// pooled item is given one, and OpConsume and OpPeek ignore it.
func (it *Item) set(key string, p *Policy, cost int, op Op) {
	it.Key, it.Cost, it.Op = key, cost, op
	q := &it.Policy
	q.Name, q.Limit, q.Window, q.Burst, q.Algorithm, q.MaxDelay, q.Shadow = p.Name, p.Limit, p.Window, p.Burst, p.Algorithm, p.MaxDelay, p.Shadow
	q.Calendar, q.Zone = p.Calendar, p.Zone
}

// ErrUnsupported reports an operation, or a mix of operations in one batch,
// that a Backend does not implement. Nothing was changed.
var ErrUnsupported = errors.New("core: operation not supported by this backend")

// Bounded is the one optional interface of a Backend: none of its calls
// outlasts its context. Once the context is done or its wait limit
// (WithWaitLimit) has passed, a call returns promptly with the context's
// error or context.DeadlineExceeded, however hung its storage, and writes
// nothing into the caller's memory afterwards. core/resilient calls such a
// backend on the caller's goroutine, any other on a goroutine of its own. A
// wrapper answers by asking what it wraps.
type Bounded interface {
	// Bounded reports whether every call returns as above.
	Bounded() bool
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

// ValidateItems validates a batch: at least one item (ErrNoPolicy), valid
// keys and policies, every OpConsume Cost within 1 and its policy's
// capacity (OpRefund and OpCharge: at least 1), one Cost per shared state,
// and one operation for the batch (ErrUnsupported). It returns the first
// problem as a typed error.
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
		case OpPeek, OpReset:
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
	if op != OpPeek && op != OpReset && !sameCost(items) {
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

// Check is Backend.Do for one key under every policy, each item consuming
// cost, for code that holds a Backend and its own instant.
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
		items[i].set(key, &policies[i], cost, op)
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
