package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ratelimit-go/ratelimit/core"
)

func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRunFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string // in stderr
	}{
		{[]string{"-policy", "100/fortnight"}, `-policy: ratelimit: invalid policy "100/fortnight": at offset 4 ("fortnight"): unknown period`},
		{[]string{"-policy", "0/1m"}, "limit 0"},
		{[]string{"-policy", "200000/1m", "-algorithms", "sliding_log"}, "sliding_log"},
		{[]string{"-algorithms", "gcra,bogus"}, `unknown algorithm`},
		{[]string{"-algorithms", "gcra,GCRA"}, "listed twice"},
		{[]string{"-algorithms", "gcra,concurrency"}, "not a rate"},
		{[]string{"-checks", "0"}, "-checks 0"},
		{[]string{"-keys", "-1"}, "-keys -1"},
		{[]string{"-step", "-1ms"}, "-step -1ms"},
		{[]string{"-start", "yesterday"}, "RFC 3339"},
		{[]string{"-start", "99999999999999"}, "out of range"},
		{[]string{"-backend", "etcd"}, `unknown backend "etcd"; want one of memory, redis`},
		{[]string{"-redis", "redis://127.0.0.1:6379"}, "apply to -backend redis only"},
		{[]string{"-redis-cluster", "a,,b", "-backend", "redis"}, "empty address"},
		{[]string{"-nope"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		code, out, errOut := runArgs(tt.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// Without a registered constructor, -backend redis says so clearly.
func TestRunRedisNotBuiltIn(t *testing.T) {
	if f, ok := backends["redis"]; ok {
		delete(backends, "redis")
		defer func() { backends["redis"] = f }()
	}
	code, _, errOut := runArgs("-backend", "redis", "-redis", "redis://127.0.0.1:6379")
	if code != 2 || !strings.Contains(errOut, `backend "redis" has no constructor in this build`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// A registered backend receives the parsed backend flags.
func TestRunRegisteredBackend(t *testing.T) {
	var got backendConfig
	closed := false
	saved, had := backends["redis"]
	delete(backends, "redis")
	registerBackend("redis", func(cfg backendConfig) (core.Backend, func(), error) {
		got = cfg
		b, _, err := openMemory(cfg)
		return b, func() { closed = true }, err
	})
	defer func() {
		delete(backends, "redis")
		if had {
			backends["redis"] = saved
		}
	}()
	code, out, errOut := runArgs("-backend", "redis", "-redis-cluster", "127.0.0.1:7000, 127.0.0.1:7001", "-checks", "10", "-keys", "2", "-algorithms", "gcra")
	if code != 0 || !strings.Contains(out, "backend redis") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if len(got.RedisCluster) != 2 || got.RedisCluster[1] != "127.0.0.1:7001" || got.RedisURL != "" || !closed {
		t.Fatalf("constructor got %+v, closed %v", got, closed)
	}
}

func TestRunTable(t *testing.T) {
	code, out, errOut := runArgs("-checks", "40", "-keys", "2", "-policy", "4/8s;algorithm=gcra", "-step", "500ms", "-algorithms", "fixed_window,token-bucket")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "40 checks round-robin over 2 keys, policy 4/8s;algorithm=gcra, manual clock from 2023-11-14T22:13:20Z advancing 500ms per check, backend memory") {
		t.Errorf("header %q", lines[0])
	}
	if f := strings.Fields(lines[2]); len(f) != 6 || f[0] != "ALGORITHM" {
		t.Errorf("column header %q", lines[2])
	}
	row := func(line string) []string { return strings.Fields(line) }
	if f := row(lines[3]); f[0] != "fixed_window" || f[1] != "24" || f[2] != "60.00%" {
		t.Errorf("fixed window row %q", lines[3])
	}
	if f := row(lines[4]); f[0] != "token_bucket" || f[1] != "26" || f[2] != "65.00%" {
		t.Errorf("token bucket row %q", lines[4])
	}
	// Columns line up: every row is as wide as the column header.
	width := utf8.RuneCountInString
	if width(lines[3]) != width(lines[2]) || width(lines[4]) != width(lines[2]) {
		t.Errorf("rows are not aligned:\n%s\n%s\n%s", lines[2], lines[3], lines[4])
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errOut := runArgs("-json", "-checks", "40", "-keys", "2", "-policy", "4/8s", "-step", "500ms", "-start", "2023-11-14T22:13:20Z")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var doc jsonReport
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if dec.More() {
		t.Fatal("more than one JSON document")
	}
	w := doc.Workload
	if w.Checks != 40 || w.Keys != 2 || w.Policy != "4/8s" || w.StepNs != int64(500*time.Millisecond) || w.Start != "2023-11-14T22:13:20Z" || w.Backend != "memory" {
		t.Fatalf("workload %+v", w)
	}
	if len(doc.Results) != 6 {
		t.Fatalf("%d results, want all six algorithms", len(doc.Results))
	}
	for i, r := range doc.Results {
		if r.Algorithm != string(core.Algorithms()[i]) || r.Checks != 40 || r.AllowedPct != 100*float64(r.Allowed)/40 || r.P99Ns < r.P50Ns || r.ChecksPerSec <= 0 {
			t.Errorf("result %+v", r)
		}
	}
	if doc.Results[0].Allowed != 24 || doc.Results[4].Allowed != 26 {
		t.Errorf("fixed window %d, gcra %d allowed; want 24 and 26", doc.Results[0].Allowed, doc.Results[4].Allowed)
	}
}

func TestGroupThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := groupThousands(n); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}
