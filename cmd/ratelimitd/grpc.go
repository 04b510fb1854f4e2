package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// rlsServer is Envoy's rate-limit service over the running configuration.
type rlsServer struct {
	rlsv3.UnimplementedRateLimitServiceServer
	s *service
}

// maxStreamsPerConn is the number of calls one gRPC connection may have in
// flight, advertised to the client in HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS.
// grpc-go's default is unbounded: one client could start calls without end,
// each holding a goroutine and its buffers. A client that wants more opens
// another connection, as Envoy's connection pool does when a connection's
// streams are all taken; grpc-go's client queues the call.
const maxStreamsPerConn = 1024

// ShouldRateLimit decides every descriptor of the request together: one
// all-or-nothing check of every matched limit, so that a request one
// descriptor denies consumes from none.
func (g *rlsServer) ShouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (resp *rlsv3.RateLimitResponse, err error) {
	start := time.Now()
	defer func() {
		overall := "none"
		if resp != nil {
			overall = resp.OverallCode.String()
		}
		g.s.m.grpcRequests.WithLabelValues(status.Code(err).String(), overall).Inc()
		g.s.m.grpcDuration.Observe(time.Since(start).Seconds())
	}()
	return g.s.shouldRateLimit(answerBy(ctx), req)
}

// answerMargin is how long before a caller's deadline, left time before
// it, the service stops waiting for its backend (see answerBy): a tenth of
// the time left, at most 5 ms. A variable for the end-to-end tests, whose
// machine may be too loaded to deliver an answer within 5 ms.
var answerMargin = func(left time.Duration) time.Duration { return min(left/10, 5*time.Millisecond) }

// answerBy gives the context of a call with a deadline a wait limit a
// little before it (answerMargin).
// A Redis backend (behind core/resilient) that has not answered by then
// has run out of time as at the end of its budget, so the configured
// failure mode answers, and the circuit breaker learns of it, before the
// caller gives up. Envoy gives its rate-limit calls 20 ms by default,
// less than the default budget: without this, a hung Redis would cost
// every call Envoy's whole timeout, Envoy's own failure mode would decide,
// and the breaker, which does not count a caller's deadline against the
// backend, would never open. A call without a deadline keeps ctx as it is.
func answerBy(ctx context.Context) context.Context {
	dl, ok := ctx.Deadline()
	if !ok {
		return ctx
	}
	return core.WithWaitLimit(ctx, dl.Add(-answerMargin(time.Until(dl))))
}

type pending struct {
	i    int // index of the descriptor
	rule *rule
	item core.Item // Cost: the descriptor's own hits_addend, else the request's
	own  bool      // the descriptor has a hits_addend of its own
	zero bool      // the descriptor's own hits_addend is 0: reported, never counted
}

func (s *service) shouldRateLimit(ctx context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	if req.GetDomain() == "" {
		return nil, status.Error(codes.InvalidArgument, "domain: a request names its domain")
	}
	rt := s.cfg.Load()
	d := rt.domains[req.Domain]
	if d == nil {
		return nil, status.Errorf(codes.InvalidArgument, "domain: %q is not configured", req.Domain)
	}
	ds := req.GetDescriptors()
	if len(ds) == 0 {
		return nil, status.Error(codes.InvalidArgument, "descriptors: a request has at least one descriptor")
	}
	if len(ds) > rt.limits.descriptors {
		return nil, status.Errorf(codes.InvalidArgument, "descriptors: at most %d per request (limits.max_descriptors)", rt.limits.descriptors)
	}
	cost := int(req.GetHitsAddend())
	if cost == 0 {
		cost = 1
	}
	resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK, Statuses: make([]*rlsv3.RateLimitResponse_DescriptorStatus, len(ds))}
	var matched []pending
	replaced := map[string]bool{}
	entries := make([]entry, 0, 4)
	for i, desc := range ds {
		// A descriptor's own hits_addend replaces the request's for it, as
		// envoyproxy/ratelimit reads it; the descriptors are still decided
		// together, each consuming its own units.
		units, zero := 0, false
		if h := desc.GetHitsAddend(); h != nil {
			switch v := h.GetValue(); {
			case v == 0:
				// Envoy sends 0 when a hits_addend format yields it (a
				// body of no bytes, say): the descriptor adds nothing, so
				// it is reported as it stands and never denies.
				zero = true
			case v > core.MaxLimit:
				return nil, status.Errorf(codes.InvalidArgument, "descriptors[%d].hits_addend: %d exceeds any capacity (at most %d)", i, v, core.MaxLimit)
			default:
				units = int(v)
			}
		}
		if len(desc.GetEntries()) == 0 {
			return nil, status.Errorf(codes.InvalidArgument, "descriptors[%d]: a descriptor has at least one entry", i)
		}
		if n := len(desc.GetEntries()); n > rt.limits.entries {
			return nil, status.Errorf(codes.InvalidArgument, "descriptors[%d]: %d entries, at most %d (limits.max_entries)", i, n, rt.limits.entries)
		}
		entries = entries[:0]
		for j, e := range desc.GetEntries() {
			if e.GetKey() == "" {
				return nil, status.Errorf(codes.InvalidArgument, "descriptors[%d].entries[%d].key: empty", i, j)
			}
			entries = append(entries, entry{e.GetKey(), e.GetValue()})
		}
		resp.Statuses[i] = &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK}
		r, key := d.match(entries)
		if r == nil {
			continue
		}
		if !r.unlimited && !r.blocked && len(key) > rt.limits.keyBytes {
			// Escaping makes the state key longer than the entries: a
			// request within the message size can still exceed it.
			return nil, status.Errorf(codes.InvalidArgument, "descriptors[%d]: its entries make a state key of %d bytes, more than %d (limits.max_key_bytes)", i, len(key), rt.limits.keyBytes)
		}
		for _, name := range r.replaces {
			replaced[name] = true
		}
		it := core.Item{Key: key, Policy: r.policy, Cost: units}
		if units == 0 {
			it.Cost = cost
		}
		matched = append(matched, pending{i: i, rule: r, item: it, own: units != 0, zero: zero})
	}
	var enforced, shadow, zero []pending
	blocked := false
	for _, p := range matched {
		st := resp.Statuses[p.i]
		switch {
		case p.rule.name != "" && replaced[p.rule.name]:
			// A matched rule that replaces this one decides instead.
		case p.rule.unlimited:
			st.LimitRemaining = math.MaxUint32
		case p.zero && !p.rule.blocked:
			zero = append(zero, p)
		case p.rule.blocked:
			st.CurrentLimit = currentLimit(p.rule)
			if p.rule.shadow {
				break
			}
			st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
			blocked = true
		case p.rule.shadow:
			shadow = append(shadow, p)
		default:
			if units := p.item.Cost; p.item.Policy.CheckCost(units) != nil {
				field := "hits_addend"
				if p.own {
					field = fmt.Sprintf("descriptors[%d].hits_addend", p.i)
				}
				return nil, status.Errorf(codes.InvalidArgument, "%s: %d exceeds the capacity %d of %q: it could never succeed", field, units, p.item.Policy.Capacity(), p.item.Policy.Name)
			}
			enforced = append(enforced, p)
		}
	}
	// Two descriptors that count in one state must add the same hits.
	for k, a := range enforced {
		for _, b := range enforced[:k] {
			if a.item.Key == b.item.Key && a.item.Cost != b.item.Cost {
				return nil, status.Errorf(codes.InvalidArgument, "descriptors[%d] and descriptors[%d] count in one limit with hits_addend %d and %d; give them one", b.i, a.i, b.item.Cost, a.item.Cost)
			}
		}
	}
	var result core.Result
	if len(enforced) > 0 && !blocked {
		items := make([]core.Item, len(enforced))
		policies := make([]core.Policy, len(enforced))
		for i, p := range enforced {
			items[i], policies[i] = p.item, p.item.Policy
		}
		var err error
		result, err = s.store.limiter.Do(ctx, items, nil)
		if err != nil {
			if ctx.Err() != nil { // the caller gave up
				return nil, status.FromContextError(ctx.Err()).Err()
			}
			if errors.Is(err, memstore.ErrStoreFull) {
				return nil, status.Error(codes.ResourceExhausted, storeFullDetail)
			}
			s.log.Error("check failed", "domain", req.Domain, "error", err.Error())
			return nil, status.Error(codes.Unavailable, "the rate limiter could not decide")
		}
		result.Policies = policies
		for i, p := range enforced {
			fill(resp.Statuses[p.i], p.rule, &result.Decisions[i])
		}
		if !result.Allowed {
			resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
		}
		s.observe(policies, result, cost)
		if rt.headers {
			if hw := rt.headerWriter(policies); hw != nil {
				h := &headerBlock{h: http.Header{}}
				hw.Write(h, result)
				for name, vs := range h.h {
					resp.ResponseHeadersToAdd = append(resp.ResponseHeadersToAdd, &corev3.HeaderValue{Key: name, Value: vs[0]})
				}
			}
		}
	}
	if blocked {
		resp.OverallCode = rlsv3.RateLimitResponse_OVER_LIMIT
	}
	// Descriptors that add no hits: their limits as they stand, after the
	// check, and always OK.
	if len(zero) > 0 {
		var d [1]core.Decision
		for _, p := range zero {
			var err error
			if d[0], err = s.store.limiter.Peek(ctx, p.item.Key, p.item.Policy); err != nil {
				if ctx.Err() != nil {
					return nil, status.FromContextError(ctx.Err()).Err()
				}
				s.log.Error("peek failed", "domain", req.Domain, "error", err.Error())
				return nil, status.Error(codes.Unavailable, "the rate limiter could not decide")
			}
			st := resp.Statuses[p.i]
			fill(st, p.rule, &d[0])
			st.Code = rlsv3.RateLimitResponse_OK
		}
	}
	// Shadow limits: checked once the enforced ones admitted, counted, and
	// always OK.
	if len(shadow) > 0 && resp.OverallCode == rlsv3.RateLimitResponse_OK {
		items := make([]core.Item, len(shadow))
		policies := make([]core.Policy, len(shadow))
		for i, p := range shadow {
			items[i], policies[i] = p.item, p.item.Policy
		}
		if res, err := s.store.limiter.Do(ctx, items, nil); err == nil {
			res.Policies = policies
			for i, p := range shadow {
				fill(resp.Statuses[p.i], p.rule, &res.Decisions[i])
				resp.Statuses[p.i].Code = rlsv3.RateLimitResponse_OK
			}
			ev := ratelimit.Event{Outcome: ratelimit.OutcomeAllowed, Shadow: res}
			s.metrics.Observer()(ctx, ev)
		} else if !errors.Is(err, context.Canceled) {
			s.log.Warn("shadow check failed", "domain", req.Domain, "error", err.Error())
		}
	}
	return resp, nil
}

func currentLimit(r *rule) *rlsv3.RateLimitResponse_RateLimit {
	return &rlsv3.RateLimitResponse_RateLimit{Name: r.name, RequestsPerUnit: r.perUnit, Unit: rlsv3.RateLimitResponse_RateLimit_Unit(r.unit)}
}

func fill(st *rlsv3.RateLimitResponse_DescriptorStatus, r *rule, d *core.Decision) {
	st.CurrentLimit = currentLimit(r)
	st.LimitRemaining = uint32(d.Remaining)
	st.DurationUntilReset = durationpb.New(d.ResetAfter)
	if !d.Allowed {
		st.Code = rlsv3.RateLimitResponse_OVER_LIMIT
	}
}
