package core_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ratelimit-go/ratelimit/core"
)

func TestErrorMessagesAndMatching(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err     error
		msg     string
		matches []error
		not     []error
	}{
		{
			&core.PolicyError{Policy: "api", Field: "limit", Value: "0", Reason: "must be at least 1", Err: core.ErrInvalidPolicy},
			`ratelimit: invalid policy "api": limit 0: must be at least 1`,
			[]error{core.ErrInvalidPolicy}, []error{core.ErrUnknownAlgorithm, core.ErrInvalidCost},
		},
		{
			&core.PolicyError{Field: "algorithm", Value: `"x"`, Reason: "unknown", Err: core.ErrUnknownAlgorithm},
			`ratelimit: unknown algorithm: algorithm "x": unknown`,
			[]error{core.ErrInvalidPolicy, core.ErrUnknownAlgorithm}, []error{core.ErrInvalidKey},
		},
		{
			&core.CostError{Cost: 0, Capacity: 5, Err: core.ErrInvalidCost},
			"ratelimit: invalid cost: cost 0: must be at least 1",
			[]error{core.ErrInvalidCost}, []error{core.ErrCostExceedsCapacity, core.ErrInvalidPolicy},
		},
		{
			&core.CostError{Policy: "api", Cost: 9, Capacity: 5, Err: core.ErrCostExceedsCapacity},
			`ratelimit: cost exceeds capacity: cost 9 is above the capacity 5 of policy "api" and could never succeed`,
			[]error{core.ErrCostExceedsCapacity}, []error{core.ErrInvalidCost},
		},
		{
			core.ValidateKey(""),
			"ratelimit: invalid key: key is empty",
			[]error{core.ErrInvalidKey}, []error{core.ErrInvalidPolicy},
		},
		{
			&core.PolicyError{Input: "1/x", Offset: 2, Value: "x", Reason: "unknown period", Err: core.ErrInvalidPolicy},
			`ratelimit: invalid policy "1/x": at offset 2 ("x"): unknown period`,
			[]error{core.ErrInvalidPolicy}, []error{core.ErrUnknownAlgorithm},
		},
		{
			&core.PolicyError{Input: "1/s;algorithm=x", Offset: 4, Value: "algorithm=x", Reason: "unknown algorithm", Err: core.ErrUnknownAlgorithm},
			`ratelimit: invalid policy "1/s;algorithm=x": at offset 4 ("algorithm=x"): unknown algorithm`,
			[]error{core.ErrInvalidPolicy, core.ErrUnknownAlgorithm}, []error{core.ErrInvalidCost},
		},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.msg {
			t.Errorf("Error() = %q, want %q", got, tt.msg)
		}
		wrapped := fmt.Errorf("handler: %w", tt.err)
		for _, s := range tt.matches {
			if !errors.Is(wrapped, s) {
				t.Errorf("%v does not match %v", tt.err, s)
			}
		}
		for _, s := range tt.not {
			if errors.Is(wrapped, s) {
				t.Errorf("%v matches %v", tt.err, s)
			}
		}
	}
}
