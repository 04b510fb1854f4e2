package stdhttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// A global policy per client IP around a ServeMux, and a stricter one on
// POST /login: a sliding log, exact in any five minutes.
func Example() {
	mw, err := stdhttp.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
		ratelimit.WithRoute("POST", "/login", core.MustParsePolicy("1/5m;algorithm=sliding_log;name=login")),
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "welcome") })
	mux.HandleFunc("GET /", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "hello") })
	h := mw(mux)

	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "/", nil),
		httptest.NewRequest("POST", "/login", nil),
		httptest.NewRequest("POST", "/login", nil),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		fmt.Println(strings.TrimSpace(fmt.Sprint(r.Method, " ", r.URL.Path, " ", rec.Code, " ", rec.Header().Get("RateLimit"), " ", rec.Header().Get("Retry-After"))))
	}
	// Output:
	// GET / 200 "api";r=99;t=1
	// POST /login 200 "login";r=0;t=300
	// POST /login 429 "login";r=0;t=300 300
}

// userKey is the context key under which the authentication middleware
// stores the caller's user ID.
type userKey struct{}

// Per authenticated user: the authentication middleware puts the user in
// the request's context, and keyfuncs.ContextValue reads it back
// (stdhttp.Request reaches the *http.Request itself where that is needed).
func Example_perUser() {
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.ContextValue(userKey{})), // 401 without one
		ratelimit.WithPolicy(core.MustParsePolicy("1/1m;name=per-user")),
	)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "hello") })
	limited := stdhttp.Middleware(m)(mux)
	authenticated := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // a stand-in for real authentication
		if user := r.Header.Get("X-User"); user != "" {
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, user))
		}
		limited.ServeHTTP(w, r)
	})

	for _, user := range []string{"alice", "alice", "bob", ""} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("X-User", user)
		rec := httptest.NewRecorder()
		authenticated.ServeHTTP(rec, req)
		fmt.Println(strings.TrimSpace(fmt.Sprintln(user, rec.Code, rec.Header().Get("RateLimit"))))
	}
	// Output:
	// alice 200 "per-user";r=0;t=60
	// alice 429 "per-user";r=0;t=60
	// bob 200 "per-user";r=0;t=60
	// 401
}
