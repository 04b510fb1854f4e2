package resilient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
)

func TestMultiKey(t *testing.T) {
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return resilient.New(newMem(t), resilient.WithFallback(newMem(t)))
	})
}

// onlyBackend hides every optional interface of a backend.
type onlyBackend struct{ core.Backend }

// TestMultiKeyFailureModes: an unavailable primary sends a multi-key check to
// the fallback, or fails it open or closed, like a single-key one.
func TestMultiKeyFailureModes(t *testing.T) {
	f := newFaulty(t)
	f.set(failing)
	items := []core.Keyed{{Key: "a", Policy: perSecond}, {Key: "b", Policy: perMinute}}
	out := make([]core.Decision, 2)
	for _, tc := range []struct {
		mode resilient.Option
		want core.Source
	}{
		{resilient.WithFallback(memstore.New()), core.SourceFallback},
		{resilient.WithFailOpen(), core.SourceFailOpen},
		{resilient.WithFailClosed(), core.SourceFailClosed},
	} {
		b := resilient.New(onlyMulti{f}, tc.mode)
		if err := b.CheckMany(context.Background(), items, 1, t0, out); err != nil || out[0].Source != tc.want || out[1].Source != tc.want {
			t.Fatalf("%v: %v %+v", tc.want, err, out)
		}
	}
	b := resilient.New(onlyBackend{newMem(t)})
	if err := b.CheckMany(context.Background(), items, 1, t0, out); !errors.Is(err, core.ErrMultiKeyUnsupported) {
		t.Fatalf("a primary without CheckMany: %v", err)
	}
}

// onlyMulti gives the faulty primary a CheckMany that fails like its Check.
type onlyMulti struct{ *faultyBackend }

func (o onlyMulti) CheckMany(ctx context.Context, items []core.Keyed, cost int, now time.Time, out []core.Decision) error {
	return o.Check(ctx, items[0].Key, []core.Policy{items[0].Policy}, cost, now, out[:1])
}
