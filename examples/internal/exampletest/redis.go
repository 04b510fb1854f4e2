package exampletest

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
)

// MiniRedisURL starts an in-process Redis (miniredis) on a loopback port
// for the rest of the test and returns its URL, for an example's -redis
// flag.
func MiniRedisURL(t testing.TB) string {
	t.Helper()
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mr.Close)
	return "redis://" + mr.Addr() + "/0"
}
