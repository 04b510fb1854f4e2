package resilient_test

import (
	"context"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/internal/must"
)

func TestMultiKey(t *testing.T) {
	backendtest.RunMultiKey(t, func(t *testing.T) core.Backend {
		return must.Do(resilient.New(newMem(t), resilient.WithFallback(newMem(t))))
	})
}

// TestMultiKeyFailureModes: an unavailable primary sends a multi-key check to
// the fallback, or fails it open or closed, like a single-key one.
func TestMultiKeyFailureModes(t *testing.T) {
	f := newFaulty(t)
	f.set(failing)
	items := []core.Item{{Key: "a", Policy: perSecond, Cost: 1}, {Key: "b", Policy: perMinute, Cost: 1}}
	out := make([]core.Decision, 2)
	for _, tc := range []struct {
		mode resilient.Option
		want core.Source
	}{
		{resilient.WithFallback(must.Do(memstore.New())), core.SourceFallback},
		{resilient.WithFailOpen(), core.SourceFailOpen},
		{resilient.WithFailClosed(), core.SourceFailClosed},
	} {
		b := must.Do(resilient.New(f, tc.mode))
		if err := b.Do(context.Background(), items, t0, out); err != nil || out[0].Source != tc.want || out[1].Source != tc.want {
			t.Fatalf("%v: %v %+v", tc.want, err, out)
		}
	}
}
