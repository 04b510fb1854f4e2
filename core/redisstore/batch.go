package redisstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// batcher groups script calls that arrive while earlier ones are on the
// wire into pipelines (group commit): at most max pipelines are in flight;
// a call that finds them all busy queues, and when a pipeline returns, its
// sender hands everything queued meanwhile to one of the queued callers,
// which sends it as the next pipeline. Under load, one write and one read
// carry many checks; alone, a call goes out at once as a plain EVALSHA.
//
// Each check is still its own script call, atomic on its own: a pipeline
// only shares the round trip. The zero value is not usable.
type batcher struct {
	client  redis.UniversalClient
	max     int
	timeout time.Duration // the Store's budget for a call; 0 means none

	mu       sync.Mutex
	pending  []*call
	inFlight int
}

// call is one script call waiting for its reply.
type call struct {
	keys  []string
	args  []any
	reply []int64
	err   error
	// batch is set, under batcher.mu, when this call must send it: the
	// calls queued while every pipeline was busy, itself included.
	batch []*call
	done  chan struct{} // receives once: the reply is in, or batch is set
}

// run executes the check script for keys and args and returns its reply.
func (b *batcher) run(ctx context.Context, keys []string, args []any) ([]int64, error) {
	b.mu.Lock()
	if b.inFlight < b.max {
		b.inFlight++
		b.mu.Unlock()
		reply, err := checkScript.Run(ctx, b.client, keys, args...).Int64Slice()
		b.handOff()
		return reply, err
	}
	c := &call{keys: keys, args: args, done: make(chan struct{}, 1)}
	b.pending = append(b.pending, c)
	b.mu.Unlock()

	select {
	case <-c.done:
	case <-ctx.Done():
		b.mu.Lock()
		if i := slices.Index(b.pending, c); i >= 0 {
			b.pending = slices.Delete(b.pending, i, i+1)
			b.mu.Unlock()
			return nil, ctx.Err() // never sent
		}
		lead := c.batch != nil
		b.mu.Unlock()
		if !lead {
			// Already on the wire: it may still run, but this caller
			// stops waiting.
			return nil, ctx.Err()
		}
		<-c.done
	}
	if c.batch != nil {
		// Others wait on this batch: send it even if this caller's ctx is
		// done, within the Store's own budget.
		bctx := context.WithoutCancel(ctx)
		if b.timeout > 0 {
			var cancel context.CancelFunc
			bctx, cancel = context.WithTimeout(bctx, b.timeout)
			defer cancel()
		}
		exec(bctx, b.client, c.batch)
		for _, o := range c.batch {
			if o != c {
				o.done <- struct{}{}
			}
		}
		b.handOff()
	}
	return c.reply, c.err
}

// handOff is called by a sender whose call has returned: it passes the
// calls queued meanwhile to the first of them, which sends them next, or
// gives the pipeline slot back.
func (b *batcher) handOff() {
	b.mu.Lock()
	if len(b.pending) > 0 {
		next := b.pending
		b.pending = nil
		next[0].batch = next
		next[0].done <- struct{}{}
	} else {
		b.inFlight--
	}
	b.mu.Unlock()
}

// exec runs every call of batch: one EVALSHA, or a pipeline of them. Calls
// that Redis answers with NOSCRIPT did not run, so they are sent again with
// EVAL (which caches the script). No other failure is retried: the script
// may have run.
func exec(ctx context.Context, client redis.UniversalClient, batch []*call) {
	if len(batch) == 1 {
		c := batch[0]
		c.reply, c.err = checkScript.Run(ctx, client, c.keys, c.args...).Int64Slice()
		return
	}
	cmds, _ := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, c := range batch {
			checkScript.EvalSha(ctx, p, c.keys, c.args...)
		}
		return nil
	})
	var retry []int
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			retry = append(retry, i)
			continue
		}
		batch[i].reply, batch[i].err = cmd.(*redis.Cmd).Int64Slice()
	}
	for _, i := range retry {
		c := batch[i]
		c.reply, c.err = checkScript.Eval(ctx, client, c.keys, c.args...).Int64Slice()
	}
	if len(cmds) != len(batch) {
		for _, c := range batch[len(cmds):] {
			c.err = errors.New("pipeline returned fewer replies than commands")
		}
	}
}
