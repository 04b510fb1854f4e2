package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/client"
)

// fake answers like ratelimitd: allowed for "ok", denied for "busy", 400 for
// anything else, and reset only with the right token.
func fake() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/check", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Key      string
			Policies []string
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad", 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch req.Key {
		case "ok":
			_ = json.NewEncoder(w).Encode(client.CheckResponse{Allowed: true, Decisions: []client.Decision{{Policy: req.Policies[0], Allowed: true, Limit: 10, Remaining: 9}}})
		case "busy":
			w.WriteHeader(429)
			_ = json.NewEncoder(w).Encode(client.CheckResponse{Decisions: []client.Decision{{Policy: req.Policies[0], Limit: 10, RetryAfterMs: 1500}}})
		default:
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(400)
			_ = json.NewEncoder(w).Encode(client.Problem{Title: "Bad Request", Status: 400, Field: "key", Detail: "no such key"})
		}
	})
	mux.HandleFunc("GET /v1/inspect", func(w http.ResponseWriter, r *http.Request) {
		ps := r.URL.Query()["policy"]
		if len(ps) == 0 {
			w.WriteHeader(400)
			return
		}
		_ = json.NewEncoder(w).Encode(client.CheckResponse{Allowed: true, Decisions: []client.Decision{{Policy: ps[0], Remaining: 3}}})
	})
	mux.HandleFunc("POST /v1/reset", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			w.WriteHeader(403)
			return
		}
		_, _ = w.Write([]byte(`{"reset":true}`))
	})
	return httptest.NewServer(mux)
}

func TestClient(t *testing.T) {
	t.Parallel()
	srv := fake()
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("t0ken"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if res, err := c.Check(ctx, "ok", []string{"api"}, 1); err != nil || !res.Allowed || res.Decisions[0].Remaining != 9 {
		t.Fatalf("allowed: %+v %v", res, err)
	}
	if res, err := c.Check(ctx, "busy", []string{"api"}, 1); err != nil || res.Allowed || res.RetryAfter() != 1500*time.Millisecond {
		t.Fatalf("denied: %+v %v", res, err)
	}
	_, err = c.Check(ctx, "nope", []string{"api"}, 1)
	var e *client.Error
	if !isStatus(err, 400) || !asError(err, &e) || e.Problem.Field != "key" || err.Error() != "ratelimitd: 400 Bad Request: no such key" {
		t.Fatalf("problem: %v", err)
	}
	if res, err := c.Inspect(ctx, "ok", []string{"api"}); err != nil || res.Decisions[0].Remaining != 3 {
		t.Fatalf("inspect: %+v %v", res, err)
	}
	if err := c.Reset(ctx, "ok", []string{"api"}); err != nil {
		t.Fatalf("reset: %v", err)
	}
	other, _ := client.New(srv.URL)
	if err := other.Reset(ctx, "ok", []string{"api"}); !isStatus(err, 403) || err.Error() != "ratelimitd: 403 Forbidden" {
		t.Fatalf("reset without the token: %v", err)
	}
	for _, bad := range []string{"", "ftp://x", "127.0.0.1:8080"} {
		if _, err := client.New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	short, _ := client.New(srv.URL, client.WithHTTPClient(&http.Client{Timeout: 50 * time.Millisecond}))
	if _, err := short.Inspect(ctx, "ok", nil); !isStatus(err, 400) {
		t.Fatalf("inspect without a policy: %v", err)
	}
}

func asError(err error, target **client.Error) bool {
	e, ok := err.(*client.Error)
	if ok {
		*target = e
	}
	return ok
}

// Checking a key against two of the service's policies, all or nothing.
// Compiled, not run: it needs a ratelimitd.
func Example() {
	c, err := client.New("http://127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := c.Check(ctx, "user:42", []string{"api", "10/s"}, 1)
	if err != nil {
		log.Fatal(err) // the service is unreachable, or the request was refused (*client.Error)
	}
	if !res.Allowed {
		fmt.Println("retry after", res.RetryAfter())
	}
}

// isStatus reports whether err is a *client.Error of the given status.
func isStatus(err error, status int) bool {
	var e *client.Error
	return asError(err, &e) && e.Status == status
}
