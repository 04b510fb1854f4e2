package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

// exampleConfig is the configuration the service's README tells a new user to run.
var exampleConfig = filepath.Join("..", "..", "examples", "ratelimitd", "ratelimitd.yaml")

// TestExampleConfig runs the service on examples/ratelimitd as the README
// shows it, on the memory store and with -redis on a real Redis and the
// Cluster, and walks through what the README and the domain file's
// comments promise: the HTTP API with a named and an inline policy, inspect,
// reset with the token, and each descriptor of domain "edge" over gRPC.
func TestExampleConfig(t *testing.T) {
	t.Setenv("RATELIMITD_ADMIN_TOKEN", adminToken)
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			args := []string{"-config", exampleConfig}
			if name != "memory" {
				args = append(args, "-redis", backend(t))
			}
			in := start(t, args...)
			key := randomName(t)

			code, res, h := in.check(key, "api", "10/s")
			if code != 200 || !res.Allowed || len(res.Decisions) != 2 || res.Decisions[0].Limit != 100 || res.Decisions[0].Remaining != 99 || res.Decisions[1].Remaining != 9 {
				t.Fatalf("check: %d %+v", code, res)
			}
			if got := h.Get("RateLimit-Policy"); !strings.Contains(got, `"api";q=100;w=60`) {
				t.Fatalf("RateLimit-Policy %q", got)
			}
			for range 5 {
				in.check(key, "login")
			}
			if code, res, h := in.check(key, "login"); code != 429 || res.Allowed || h.Get("Retry-After") == "" {
				t.Fatalf("sixth login: %d %+v %v", code, res, h)
			}
			if code, _, body := in.do("GET", "/v1/inspect?key="+key+"&policy=login", "", ""); code != 200 || !strings.Contains(body, `"algorithm":"sliding_log"`) {
				t.Fatalf("inspect: %d %s", code, body)
			}
			reset := `{"key":"` + key + `","policies":["login"]}`
			if code, _, _ := in.do("POST", "/v1/reset", "application/json", reset); code != 401 {
				t.Fatalf("reset without the token: %d", code)
			}
			if code, _, body := in.do("POST", "/v1/reset", "application/json", reset, "Authorization", "Bearer "+adminToken); code != 200 {
				t.Fatalf("reset: %d %s", code, body)
			}
			if code, _, _ := in.check(key, "login"); code != 200 {
				t.Fatalf("login after the reset: %d", code)
			}

			ctx := context.Background()
			call := func(ds ...[]string) *rlsv3.RateLimitResponse {
				t.Helper()
				res, err := in.rls.ShouldRateLimit(ctx, rlsRequest("edge", 0, ds...))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			if res := call([]string{"remote_address", key}); res.OverallCode != rlsv3.RateLimitResponse_OK ||
				res.Statuses[0].CurrentLimit.GetRequestsPerUnit() != 100 || res.Statuses[0].LimitRemaining != 99 {
				t.Fatalf("a client address: %v", res)
			}
			if res := call([]string{"remote_address", "192.0.2.66"}); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
				t.Fatalf("the blocked address: %v", res)
			}
			login := []string{"path", "/login", "remote_address", key}
			for i := range 5 {
				if res := call(login); res.OverallCode != rlsv3.RateLimitResponse_OK {
					t.Fatalf("login %d: %v", i+1, res)
				}
			}
			if res := call(login); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT || res.Statuses[0].DurationUntilReset.AsDuration() <= 0 {
				t.Fatalf("sixth login: %v", res)
			}
			if res := call([]string{"path", "/healthz"}); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].CurrentLimit != nil {
				t.Fatalf("health checks: %v", res)
			}
			for i := range 3 {
				if res := call([]string{"plan", "free"}); res.OverallCode != rlsv3.RateLimitResponse_OK {
					t.Fatalf("shadow mode, call %d: %v", i+1, res)
				}
			}
		})
	}
}

// TestREADMEConfig: the configuration the service's README shows is the
// example file, so that what a reader copies is what this repository runs
// and tests.
func TestREADMEConfig(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile(exampleConfig)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+string(example)+"```\n") {
		t.Fatalf("cmd/ratelimitd/README.md has no yaml block equal to %s", exampleConfig)
	}
}
