package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
)

// batcher groups checks that arrive while earlier ones are on the wire: at
// most max script calls are in flight, and when one returns, the checks
// queued meanwhile go out together, those bound for one node in one script
// call that decides them one after another (each as atomic as alone), the
// others in one pipeline. Alone, a check goes out at once.
type batcher struct {
	client  redis.UniversalClient
	margin  any // the TTL margin in milliseconds, an int64 boxed once
	max     int
	perCall int     // the most checks one script call decides
	route   routing // which queued checks may share a script call

	mu       sync.Mutex
	pending  []*call
	inFlight int
}

// routing says which checks may be decided by one script call: those whose
// keys the client sends to one node.
type routing int

const (
	routeOne  routing = iota // one node (a *redis.Client, also under Sentinel): any checks
	routeSlot                // a Cluster: checks whose keys share a hash slot
	routeTag                 // anything else: checks whose keys share a hash tag
)

// routingOf is the routing of client's type.
func routingOf(client redis.UniversalClient) routing {
	switch client.(type) {
	case *redis.Client:
		return routeOne
	case *redis.ClusterClient:
		return routeSlot
	}
	return routeTag
}

// call is one check waiting for its reply.
type call struct {
	now, cost int64         // microseconds; units (0 for a peek, -1 for units per key in costs, -2 for a refund or charge)
	costs     []int64       // each key's units when they differ (a multi-key check), or its signed units and instant (cost -2); nil otherwise
	keys      []string      // one Redis key per policy (or item)
	pis       []*policyInfo // the policy of each key
	reply     []int64
	err       error
	// ctx is the caller's context, for the goroutine that sends a batch
	// this call is the first of (its values, not its end).
	ctx context.Context
	// bounded: the caller may stop waiting (its context can end, or it
	// has a wait limit).
	bounded bool
	// batch is set, under batcher.mu, when this call must send it: the
	// calls queued while every script call was busy, itself included.
	// Only a call that is not bounded leads a batch.
	batch []*call
	done  chan struct{} // receives once: the reply is in, or batch is set

	// Storage for a check of one key and one policy, so that such a call
	// is one allocation. A call is never reused: a sender may still write
	// into an abandoned one.
	key1   [1]string
	pi1    [1]*policyInfo
	reply1 [replyPerKey]int64
	self   [1]*call
}

// appendCosts appends the numbers that follow key i's policy number: none,
// its units (cost -1), or its signed units and the charge's instant (cost
// -2, a refund or a charge).
func (c *call) appendCosts(args []any, i int) []any {
	if c.costs == nil {
		return args
	}
	per := len(c.costs) / len(c.pis)
	for _, v := range c.costs[per*i : per*(i+1)] {
		args = append(args, v)
	}
	return args
}

// newCallOf returns a call of n keys at now (µs) for cost units.
func newCallOf(n int, now, cost int64) *call {
	c := &call{now: now, cost: cost}
	if n == 1 {
		c.keys, c.pis = c.key1[:], c.pi1[:]
	} else {
		c.keys, c.pis = make([]string, n), make([]*policyInfo, n)
	}
	return c
}

// replyBuf returns room for a reply of n numbers.
func (c *call) replyBuf(n int) []int64 {
	if n <= len(c.reply1) {
		return c.reply1[:n:n]
	}
	return make([]int64, n)
}

// maxSenders bounds the script calls sent from the Store's own goroutines;
// past it a call whose context can end queues for the next batch.
const maxSenders = 256

// run decides c and returns its reply. A caller that may stop waiting
// (its context can end, or carries a wait limit) never waits on the
// network itself: its call goes out from a goroutine, and it returns as
// soon as ctx is done or the limit has passed. A caller that waits
// whatever happens sends its own call, or a batch, on its own goroutine.
func (b *batcher) run(ctx context.Context, c *call) ([]int64, error) {
	left, limited := waitLeft(ctx)
	if limited && left <= 0 {
		return nil, context.DeadlineExceeded // not sent: nobody would wait for it
	}
	c.bounded = limited || ctx.Done() != nil
	b.mu.Lock()
	if b.inFlight < b.max && (!c.bounded || b.inFlight < maxSenders) {
		b.inFlight++
		b.mu.Unlock()
		if !c.bounded {
			return b.sendAlone(ctx, c)
		}
		c.done = make(chan struct{}, 1)
		// Alone in its script call: the caller's own context, so that a
		// call whose caller has already left is not sent at all.
		c.self[0] = c
		go b.send(ctx, c.self[:], false)
	} else {
		c.done = make(chan struct{}, 1)
		c.ctx = ctx
		b.pending = append(b.pending, c)
		b.mu.Unlock()
	}

	t, expired := limitTimer(left, limited)
	defer stopTimer(t)
	select {
	case <-c.done:
	case <-ctx.Done():
		b.leave(c)
		return nil, ctx.Err()
	case <-expired:
		b.leave(c)
		return nil, context.DeadlineExceeded
	}
	if c.batch != nil {
		// Others wait on this batch: this caller, which waits for the
		// answer whatever happens, sends it.
		b.lead(ctx, c.batch)
	}
	return c.reply, c.err
}

// leave takes c out of the queue for a caller that stops waiting.
func (b *batcher) leave(c *call) {
	b.mu.Lock()
	if i := slices.Index(b.pending, c); i >= 0 {
		b.pending = slices.Delete(b.pending, i, i+1)
	}
	b.mu.Unlock()
}

// waitLeft returns the time left until ctx's wait limit
// (core.WithWaitLimit), and whether it has one.
func waitLeft(ctx context.Context) (time.Duration, bool) {
	limit, ok := core.WaitLimit(ctx)
	if !ok {
		return 0, false
	}
	return time.Until(limit), true
}

// timers holds stopped timers for the waits bounded by a wait limit, so
// that such a wait allocates none.
var timers sync.Pool

// limitTimer returns a pooled timer that fires after left, and its
// channel, for a caller with a wait limit (limited); otherwise nil and a
// nil channel, which never fires. Stop it with stopTimer.
func limitTimer(left time.Duration, limited bool) (*time.Timer, <-chan time.Time) {
	if !limited {
		return nil, nil
	}
	t, ok := timers.Get().(*time.Timer)
	if ok {
		t.Reset(left)
	} else {
		t = time.NewTimer(left)
	}
	return t, t.C
}

// stopTimer stops t, if not nil, and keeps it for limitTimer (draining it
// under asynctimerchan=1).
func stopTimer(t *time.Timer) {
	if t == nil {
		return
	}
	if !t.Stop() {
		select {
		case <-t.C:
		default:
		}
	}
	timers.Put(t)
}

// lead sends batch on the goroutine of its first caller, which is not
// bounded, and passes on the slot however the call ends.
func (b *batcher) lead(ctx context.Context, batch []*call) {
	defer b.handOff()
	b.decide(ctx, batch, true, true)
}

// sendAlone sends c, the only call of its script call, on the caller's
// goroutine, and passes on the slot however the call ends.
func (b *batcher) sendAlone(ctx context.Context, c *call) ([]int64, error) {
	defer b.handOff()
	one := [1]*call{c}
	return checkScript.Run(ctx, b.client, c.keys, b.args(one[:])...).Int64Slice()
}

// decide sends batch and signals each of its calls. A batch of queued calls
// is sent with the first one's context detached (the client's timeouts
// bound it); a call alone with its caller's, and not at all once its wait
// limit has passed. A panic in the client becomes every call's error, and
// is raised again on a caller's own goroutine (own).
func (b *batcher) decide(ctx context.Context, batch []*call, detach, own bool) {
	if detach {
		ctx = context.WithoutCancel(ctx)
	}
	defer func() {
		r := recover()
		if r != nil {
			err := fmt.Errorf("redisstore: the script call panicked: %v", r)
			for _, c := range batch {
				c.reply, c.err = nil, err
			}
		}
		for _, c := range batch {
			c.done <- struct{}{} // buffered; a leader's own is not read
		}
		if r != nil && own {
			panic(r)
		}
	}()
	if !detach {
		if left, ok := waitLeft(ctx); ok && left <= 0 {
			for _, c := range batch {
				c.err = context.DeadlineExceeded
			}
			return
		}
	}
	b.exec(ctx, batch)
}

// send is the goroutine that sends calls for callers that may stop
// waiting: batch, then whatever queued meanwhile while its first call is
// bounded.
func (b *batcher) send(ctx context.Context, batch []*call, detach bool) {
	for batch != nil {
		b.decide(ctx, batch, detach, false)
		batch = b.next()
		if batch != nil {
			ctx, detach = batch[0].ctx, true
		}
	}
}

// handOff passes on the calls queued while a caller's own script call was
// in flight, starting a sender for them if they need one.
func (b *batcher) handOff() {
	if batch := b.next(); batch != nil {
		go b.send(batch[0].ctx, batch, true)
	}
}

// next takes the calls queued while a script call was in flight: their
// first caller sends them when it is not bounded (next returns nil), else a
// goroutine does. With nothing queued it gives the slot back.
func (b *batcher) next() []*call {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) == 0 {
		b.inFlight--
		return nil
	}
	batch := b.pending
	b.pending = nil
	if lead := batch[0]; !lead.bounded {
		lead.batch = batch
		lead.done <- struct{}{}
		return nil
	}
	return batch
}

// exec decides every call of batch, in script calls alone or in one
// pipeline. A script call answered NOSCRIPT did not run and is sent again
// with EVAL; no other failure is retried.
func (b *batcher) exec(ctx context.Context, batch []*call) {
	groups := b.group(batch)
	if len(groups) == 1 {
		deliver(groups[0], checkScript.Run(ctx, b.client, keysOf(groups[0]), b.args(groups[0])...))
		return
	}
	cmds, _ := b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, g := range groups {
			checkScript.EvalSha(ctx, p, keysOf(g), b.args(g)...)
		}
		return nil
	})
	for i, g := range groups {
		if i >= len(cmds) {
			for _, c := range g {
				c.err = errors.New("pipeline returned fewer replies than commands")
			}
			continue
		}
		cmd := cmds[i].(*redis.Cmd)
		if err := cmd.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			cmd = checkScript.Eval(ctx, b.client, keysOf(g), b.args(g)...)
		}
		deliver(g, cmd)
	}
}

// group splits batch, in order, into the checks each script call decides:
// at most perCall, all bound for one node; a check whose keys span slots
// goes alone.
func (b *batcher) group(batch []*call) [][]*call {
	if b.perCall <= 1 || len(batch) == 1 {
		groups := make([][]*call, len(batch))
		for i := range batch {
			groups[i] = batch[i : i+1 : i+1]
		}
		return groups
	}
	if b.route == routeOne {
		groups := make([][]*call, 0, (len(batch)+b.perCall-1)/b.perCall)
		for len(batch) > 0 {
			n := min(len(batch), b.perCall)
			groups = append(groups, batch[:n:n])
			batch = batch[n:]
		}
		return groups
	}
	var groups [][]*call
	open := make(map[string]int) // node key -> index of its group still filling
	for _, c := range batch {
		k, ok := b.nodeKey(c.keys)
		if !ok {
			groups = append(groups, []*call{c})
			continue
		}
		if i, found := open[k]; found && len(groups[i]) < b.perCall {
			groups[i] = append(groups[i], c)
			continue
		}
		open[k] = len(groups)
		groups = append(groups, []*call{c})
	}
	return groups
}

// nodeKey returns what decides the node of every key in keys, as text (the
// slot on a Cluster, the hash tag otherwise), and false if they differ.
func (b *batcher) nodeKey(keys []string) (string, bool) {
	first := hashTag(keys[0])
	for _, k := range keys[1:] {
		t := hashTag(k)
		if t == first {
			continue
		}
		if b.route != routeSlot || slot(t) != slot(first) {
			return "", false
		}
	}
	if b.route == routeSlot {
		s := slot(first)
		return string([]byte{byte(s >> 8), byte(s)}), true
	}
	return first, true
}

// keysOf returns the KEYS of one script call deciding every check of g, in
// order.
func keysOf(g []*call) []string {
	if len(g) == 1 {
		return g[0].keys
	}
	n := 0
	for _, c := range g {
		n += len(c.keys)
	}
	keys := make([]string, 0, n)
	for _, c := range g {
		keys = append(keys, c.keys...)
	}
	return keys
}

// args returns the ARGV of one script call deciding every check of g, in
// order: each distinct policy once, then each check, naming its keys'
// policies by number (see lua/90_check.lua).
func (b *batcher) args(g []*call) []any {
	if len(g) == 1 {
		// One check: its policies in order, a policy named twice sent
		// twice rather than searched for.
		c := g[0]
		args := make([]any, 0, callHead+(argsPerPolicy+1)*len(c.pis)+checkHead)
		args = append(args, b.margin, int64(1), int64(len(c.pis)))
		for _, pi := range c.pis {
			args = append(args, pi.args[:]...)
		}
		args = append(args, c.now, c.cost, int64(len(c.pis)))
		for i := range c.pis {
			args = append(args, int64(i+1))
			args = c.appendCosts(args, i)
		}
		return args
	}
	refs := make([]int64, 0, 2*len(g))
	distinct := make([]*policyInfo, 0, 4)
	var index map[*policyInfo]int64 // once distinct outgrows a linear search
	for _, c := range g {
		for _, pi := range c.pis {
			n := int64(-1)
			if index != nil {
				if i, ok := index[pi]; ok {
					n = i
				}
			} else if i := slices.Index(distinct, pi); i >= 0 {
				n = int64(i)
			}
			if n < 0 {
				n = int64(len(distinct))
				distinct = append(distinct, pi)
				if index != nil {
					index[pi] = n
				} else if len(distinct) > 16 {
					index = make(map[*policyInfo]int64, 2*len(distinct))
					for i, d := range distinct {
						index[d] = int64(i)
					}
				}
			}
			refs = append(refs, n+1)
		}
	}
	args := make([]any, 0, callHead+argsPerPolicy*len(distinct)+checkHead*len(g)+len(refs))
	args = append(args, b.margin, int64(len(g)), int64(len(distinct)))
	for _, pi := range distinct {
		args = append(args, pi.args[:]...)
	}
	for _, c := range g {
		args = append(args, c.now, c.cost, int64(len(c.pis)))
		for i, r := range refs[:len(c.pis)] {
			args = append(args, r)
			args = c.appendCosts(args, i)
		}
		refs = refs[len(c.pis):]
	}
	return args
}

// deliver decodes the reply of the script call that decided g into each
// call's reply or error.
func deliver(g []*call, cmd *redis.Cmd) {
	if len(g) == 1 {
		g[0].reply, g[0].err = cmd.Int64Slice()
		return
	}
	vals, err := cmd.Slice()
	if err != nil {
		for _, c := range g {
			c.err = err
		}
		return
	}
	i := 0
	for _, c := range g {
		if i < len(vals) {
			if text, ok := vals[i].(string); ok {
				c.err = checkError(text)
				i++
				continue
			}
		}
		n := replyPerKey * len(c.keys)
		if i+n > len(vals) {
			c.err = errors.New("redisstore: the script's reply ended early")
			i = len(vals)
			continue
		}
		reply := c.replyBuf(n)
		for j := range reply {
			v, ok := vals[i+j].(int64)
			if !ok {
				c.err = errors.New("redisstore: the script replied a non-integer")
				break
			}
			reply[j] = v
		}
		if c.err == nil {
			c.reply = reply
		}
		i += n
	}
}

// checkError is the error one check of a shared script call raised, as
// Redis would have answered it alone: a redis.Error.
type checkError string

func (e checkError) Error() string { return string(e) }

// RedisError marks checkError as an error Redis replied (redis.Error).
func (checkError) RedisError() {}

// hashTag returns the part of key Redis hashes to choose its slot: the text
// between the first '{' and the next '}' when it is not empty, else key.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// slot returns the Redis Cluster hash slot of a hash tag: CRC-16/XMODEM
// modulo 16384.
func slot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc & 16383
}
