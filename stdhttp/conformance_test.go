package stdhttp_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/ratelimit-go/ratelimit/internal/httpsuite"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// stdAdapter builds net/http apps for the conformance suite: a ServeMux with
// the suite's routes, the global middleware wrapped around the mux.
type stdAdapter struct{}

func (stdAdapter) Native(r keyfuncs.Request) (string, bool) {
	if req := stdhttp.Request(r); req != nil {
		return req.Header.Get(httpsuite.NativeHeader), true
	}
	return "", false
}

func (stdAdapter) Handler(t testing.TB, s httpsuite.Setup) http.Handler {
	mux := http.NewServeMux()
	for _, r := range httpsuite.Routes {
		var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, httpsuite.OKBody)
		})
		if r.Path == httpsuite.WorkPath {
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				status, body, _ := httpsuite.Work(r.Context(), r.Header.Get)
				w.WriteHeader(status)
				_, _ = io.WriteString(w, body)
			})
		}
		if r.Method == "POST" && r.Path == "/login" && len(s.RoutePolicies) > 0 {
			h = stdhttp.Route(s.RouteBase, s.RoutePolicies...)(h)
		}
		mux.Handle(r.Method+" "+r.Path, h)
	}
	var h http.Handler = mux
	if s.Global != nil {
		h = stdhttp.Middleware(s.Global)(mux)
	}
	if s.Identify {
		next := h
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u := r.Header.Get(httpsuite.UserHeader); u != "" {
				r = r.WithContext(context.WithValue(r.Context(), httpsuite.UserKey, u))
			}
			next.ServeHTTP(w, r)
		})
	}
	return h
}

func TestConformance(t *testing.T) { httpsuite.Run(t, stdAdapter{}) }

// TestE2E serves the handler on a real loopback server and checks that a
// retrying client honouring Retry-After gets through (httpsuite.E2E).
func TestE2E(t *testing.T) { httpsuite.RunE2E(t, stdAdapter{}) }
