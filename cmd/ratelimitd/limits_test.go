package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestLimits: every bound of the limits section is configurable, and a
// request past one is refused with an error naming it; the memory store
// at its bound refuses new keys, clearly and counted, and goes on checking
// the keys it holds.
func TestLimits(t *testing.T) {
	cfg := writeConfig(t, "c.yaml", `limits:
  max_body_bytes: 1024
  max_policies: 2
  max_descriptors: 2
  max_entries: 2
  max_key_bytes: 32
  memory_keys: 1000
policies:
  a: "100/1h"
  b: "100/1h"
  c: "100/1h"
envoy:
  domains:
    - domain: d
      descriptors:
        - key: user
          rate_limit: {unit: hour, requests_per_unit: 100}
`)
	in := start(t, "-config", cfg)
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{"body", `{"key":"` + strings.Repeat("k", 1100) + `","policies":["a"]}`, "limits.max_body_bytes", 413},
		{"policies", `{"key":"k","policies":["a","b","c"]}`, "at most 2 policies (limits.max_policies)", 400},
		{"key", `{"key":"` + strings.Repeat("k", 33) + `","policies":["a"]}`, "1 to 32 bytes (limits.max_key_bytes)", 400},
	} {
		if code, _, body := in.do("POST", "/v1/check", "application/json", tc.body); code != tc.code || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, code, body, tc.code, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		ds   [][]string
		want string
	}{
		{"descriptors", [][]string{{"user", "1"}, {"user", "2"}, {"user", "3"}}, "limits.max_descriptors"},
		{"entries", [][]string{{"user", "1", "x", "y", "z", "w"}}, "3 entries, at most 2 (limits.max_entries)"},
	} {
		_, err := in.rls.ShouldRateLimit(context.Background(), rlsRequest("d", 1, tc.ds...))
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want InvalidArgument %q", tc.name, err, tc.want)
		}
	}

	// The memory store's bound: 1,000 states (one policy, 1,000 keys, the
	// probe of no key: the memory store has none).
	for i := range 1000 {
		if code, _, _ := in.check(fmt.Sprint("u", i), "a"); code != 200 {
			t.Fatalf("key %d: %d", i, code)
		}
	}
	code, _, body := in.do("POST", "/v1/check", "application/json", `{"key":"new","policies":["a"]}`)
	if code != 503 || !strings.Contains(body, "limits.memory_keys") {
		t.Fatalf("a new key at the bound: %d %s", code, body)
	}
	if code, _, _ := in.check("u7", "a"); code != 200 {
		t.Fatalf("a key held, at the bound: %d", code)
	}
	if _, err := in.rls.ShouldRateLimit(context.Background(), rlsRequest("d", 1, []string{"user", "fresh"})); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("gRPC, a new key at the bound: %v", err)
	}
	m := in.metrics()
	if !strings.Contains(m, `ratelimit_memstore_keys{store="memory"} 1000`) || !strings.Contains(m, `ratelimit_memstore_refused_total{store="memory"} 2`) {
		t.Errorf("metrics:\n%s", grepLines(m, "memstore"))
	}

	// A change of the limits needs a restart.
	if err := os.WriteFile(cfg, []byte("limits:\n  max_policies: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in.hup <- syscall.SIGHUP
	waitFor(t, "the reload refused", func() bool { return strings.Contains(in.logs.String(), "the limits cannot change without a restart") })
}

func TestLimitsConfigErrors(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{"limits:\n  max_policies: 0\n", "c.yaml:2: limits.max_policies: 0: want 1 to 64 (default 16)"},
		{"limits:\n  max_body_bytes: 100\n", "limits.max_body_bytes: 100: want 1024"},
		{"limits:\n  max_key_bytes: 100000\n", "limits.max_key_bytes"},
		{"backend:\n  url: redis://127.0.0.1:1/0\nlimits:\n  memory_keys: 5000\n", "limits.memory_keys: bounds the memory store"},
		{"limits:\n  max_polices: 3\n", `unknown field "max_polices" (want max_body_bytes, max_policies, max_descriptors, max_entries, max_key_bytes, memory_keys)`},
	} {
		if _, err := loadConfig(writeConfig(t, "c.yaml", tc.config), ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.config, err, tc.want)
		}
	}
}
