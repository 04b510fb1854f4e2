package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/ratelimit-go/ratelimit/core/resilient"
)

type redisErr string

func (e redisErr) Error() string { return string(e) }

func TestErrorKind(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("x: %w", resilient.ErrBudgetExceeded):                          "timeout",
		context.DeadlineExceeded:                                                  "timeout",
		&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}:                       "refused",
		errors.New("redisstore: check: EOF"):                                      "refused",
		redisErr("OOM command not allowed when used memory > 'maxmemory'."):       "out_of_memory",
		redisErr("CROSSSLOT Keys in request don't hash to the same slot"):         "cluster",
		redisErr("CLUSTERDOWN The cluster is down"):                               "cluster",
		redisErr("ERR Error running script (call to f_1): @user_script:12: boom"): "script",
		fmt.Errorf("resilient: %w", resilient.ErrOverloaded):                      "overloaded",
		errors.New("something else"):                                              "other",
	} {
		if got := errorKinds[errorKind(err)]; got != want {
			t.Errorf("%v: %s, want %s", err, got, want)
		}
	}
}
