package echorl_test

import (
	"testing"

	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
)

// TestE2E serves an Echo server on a real loopback server and checks that a
// retrying client honouring Retry-After gets through. It waits about 1 s.
func TestE2E(t *testing.T) { httpsuite.RunE2E(t, adapter{}) }
