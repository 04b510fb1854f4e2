package backendtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
)

// Replay runs a trace through a Limiter over a backend and a manual clock.
// Here: the fixed window's edge burst, two units 8 s into a 10 s window and
// two more 2 s later.
func ExampleReplay() {
	p := core.MustParsePolicy("2/10s;algorithm=fixed_window")
	check := backendtest.Step{Key: "user:42", Policies: []core.Policy{p}, Cost: 1}
	steps := []backendtest.Step{check, check, check, check, check}
	steps[0].Set = time.Date(2026, 1, 1, 0, 0, 8, 0, time.UTC)
	steps[3].Advance = 2 * time.Second

	outcomes := backendtest.Replay(context.Background(), backendtest.NewReference(), core.NewManualClock(time.Time{}), steps)
	for _, o := range outcomes {
		d := o.Decisions[0]
		fmt.Printf("%s allowed=%v remaining=%d retry_after=%v\n", o.Now.Format(time.TimeOnly), o.Allowed, d.Remaining, d.RetryAfter)
	}
	// Output:
	// 00:00:08 allowed=true remaining=1 retry_after=0s
	// 00:00:08 allowed=true remaining=0 retry_after=0s
	// 00:00:08 allowed=false remaining=0 retry_after=2s
	// 00:00:10 allowed=true remaining=1 retry_after=0s
	// 00:00:10 allowed=true remaining=0 retry_after=0s
}

// A differential test replays one random trace on two backends and compares
// every decision. Any backend can stand in for the second reference.
func ExampleDiffOutcomes() {
	steps := backendtest.RandomTrace(7, 500, 0, true)
	ctx := context.Background()
	want := backendtest.Replay(ctx, backendtest.NewReference(), core.NewManualClock(time.Time{}), steps)
	got := backendtest.Replay(ctx, backendtest.NewReference(), core.NewManualClock(time.Time{}), steps)
	fmt.Println(len(steps), backendtest.DiffOutcomes(steps, want, got))
	// Output: 500 <nil>
}
