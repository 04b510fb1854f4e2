package exampleenv_test

import (
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/examples/internal/exampleenv"
)

func TestParseFlags(t *testing.T) {
	f, err := exampleenv.ParseFlags("x", nil, io.Discard)
	if err != nil || f.Addr != "127.0.0.1:8080" || f.RedisURL != "" {
		t.Fatalf("defaults: %+v %v", f, err)
	}
	if f.Budget != 50*time.Millisecond || f.OnFailure != "fallback" {
		t.Fatalf("Redis defaults: %+v", f)
	}
	f, err = exampleenv.ParseFlags("x", []string{"-addr", "127.0.0.1:9", "-redis", "redis://127.0.0.1:6379/2", "-redis-budget", "20ms", "-on-redis-failure", "closed"}, io.Discard)
	if err != nil || f.Addr != "127.0.0.1:9" || f.RedisURL != "redis://127.0.0.1:6379/2" || f.Budget != 20*time.Millisecond || f.OnFailure != "closed" {
		t.Fatalf("set: %+v %v", f, err)
	}
	for _, bad := range [][]string{{"-redis-budget", "0s"}, {"-on-redis-failure", "maybe"}} {
		if _, err := exampleenv.ParseFlags("x", bad, io.Discard); err == nil {
			t.Fatalf("%v accepted", bad)
		}
	}
	if _, err := exampleenv.ParseFlags("x", []string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if _, err := exampleenv.ParseFlags("x", []string{"-nope"}, io.Discard); err == nil {
		t.Fatal("unknown flag accepted")
	}
}

var policy = core.MustParsePolicy("1/1m;algorithm=fixed_window;name=p")

// twice checks that l admits one request for a key and denies the next.
func twice(t *testing.T, l *core.Limiter) {
	t.Helper()
	for i, want := range []bool{true, false} {
		d, err := l.Allow(context.Background(), "k", policy)
		if err != nil || d.Allowed != want {
			t.Fatalf("check %d: %+v %v, want allowed=%v", i+1, d, err, want)
		}
	}
}

func TestOpenLimiterInMemory(t *testing.T) {
	l, closeStore, err := exampleenv.OpenLimiter(context.Background(), exampleenv.Flags{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer closeStore()
	twice(t, l)
}

func TestOpenLimiterRedis(t *testing.T) {
	mr := miniredis.NewMiniRedis()
	if err := mr.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	l, closeStore, err := exampleenv.OpenLimiter(context.Background(), exampleenv.Flags{RedisURL: "redis://" + mr.Addr() + "/0", Budget: 50 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	twice(t, l)
	if len(mr.Keys()) == 0 {
		t.Fatal("no state written to Redis")
	}
	// Behind core/resilient: with Redis gone, the fallback answers.
	mr.Close()
	if d, err := l.Allow(context.Background(), "down", core.MustParsePolicy("1/1m")); err != nil || !d.Allowed || d.Source != core.SourceFallback {
		t.Fatalf("with Redis gone: %+v %v, want the fallback's admission", d, err)
	}
	if err := closeStore(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenLimiterRedisErrors(t *testing.T) {
	if _, _, err := exampleenv.OpenLimiter(context.Background(), exampleenv.Flags{RedisURL: "http://127.0.0.1:6379"}, nil); err == nil || !strings.Contains(err.Error(), "-redis") {
		t.Fatalf("bad URL: %v", err)
	}
	// A port nobody listens on: refused at once.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	began := time.Now()
	if _, _, err := exampleenv.OpenLimiter(context.Background(), exampleenv.Flags{RedisURL: "redis://" + addr, Budget: 50 * time.Millisecond}, nil); err == nil {
		t.Fatal("unreachable Redis accepted")
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("gave up after %v", d)
	}
}

func TestServeHTTPStopsWithItsContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- exampleenv.ServeHTTP(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	}()
	res, err := http.Get("http://" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTeapot {
		t.Fatalf("status %d", res.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
}

func TestServeHTTPReportsAServeError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // Serve fails at once
	if err := exampleenv.ServeHTTP(context.Background(), ln, http.NotFoundHandler()); err == nil {
		t.Fatal("no error from a closed listener")
	}
}

// TestRedisURLPasswordIsNotPrinted: a malformed or refused -redis URL's
// error carries no password.
func TestRedisURLPasswordIsNotPrinted(t *testing.T) {
	const secret = "s3cretPassw0rd"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := ln.Addr().String()
	ln.Close()
	for _, u := range []string{"redis://user:" + secret + "@[::1:6379/0", "redis://user:" + secret + "@" + refused + "/0"} {
		_, _, err := exampleenv.OpenLimiter(context.Background(), exampleenv.Flags{RedisURL: u, Budget: 50 * time.Millisecond}, nil)
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Fatalf("OpenLimiter(%q) = %v", u, err)
		}
	}
}
