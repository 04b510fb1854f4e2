package backendtest_test

import (
	"context"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// Diff replays one trace on several backends and compares every outcome with
// the first backend's. Here the fixed window's edge burst (two units 8 s into
// a 10 s window, two more 2 s later), then a random trace of 500 steps across
// every algorithm, with invalid costs and clock jumps, on the reference model
// and on the memory store.
func ExampleDiff() {
	p := core.MustParsePolicy("2/10s;algorithm=fixed_window")
	check := backendtest.Step{Key: "user:42", Policies: []core.Policy{p}, Cost: 1}
	steps := []backendtest.Step{check, check, check, check, check}
	steps[0].Set = time.Date(2026, 1, 1, 0, 0, 8, 0, time.UTC)
	steps[3].Advance = 2 * time.Second
	steps = append(steps, backendtest.RandomTrace(7, 500, 0, true)...)

	if store, err := memstore.New(); err == nil {
		fmt.Println(backendtest.Diff(context.Background(), steps, backendtest.NewReference(), store))
	}
	// Output: <nil>
}
