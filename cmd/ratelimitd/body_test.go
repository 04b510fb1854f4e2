package main

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
)

// TestBodyGivenBack: after the API's handler, the request carries the
// server's own body again, closed when the handler read it to its end and
// open when it did not (net/http then reads it only for a body it
// recognises that is still open, and keeps the connection either way).
func TestBodyGivenBack(t *testing.T) {
	s, err := newService(writeConfig(t, "c.yaml", "policies:\n  api: \"1/1m\"\n"), "", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.close()
	h := s.handler()
	type seen struct {
		same   bool  // the server's body is back
		status int   // the answer
		read   error // what reading the body afterwards gives
	}
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := r.Body
		rec := &statusRecorder{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		_, err := r.Body.Read(make([]byte, 1))
		got <- seen{same: r.Body == body, status: rec.status, read: err}
	}))
	defer srv.Close()
	cl := srv.Client()
	for i, c := range []struct {
		contentType string
		status      int
		closed      bool // the handler read the body to its end
	}{
		{"application/json", http.StatusOK, true},
		{"application/json", http.StatusTooManyRequests, true},
		{"text/plain", http.StatusUnsupportedMediaType, false}, // refused before reading
		{"application/json", http.StatusTooManyRequests, true},
	} {
		var reused bool
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused }})
		req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/check", strings.NewReader(`{"key":"k","policies":["api"]}`))
		req.Header.Set("Content-Type", c.contentType)
		res, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		g := <-got
		if !g.same || g.status != c.status || res.StatusCode != c.status {
			t.Fatalf("request %d: body given back %v, status %d (client saw %d), want %d", i, g.same, g.status, res.StatusCode, c.status)
		}
		if closed := errors.Is(g.read, http.ErrBodyReadAfterClose); closed != c.closed {
			t.Fatalf("request %d: reading the body afterwards: %v; want it closed: %v", i, g.read, c.closed)
		}
		if i > 0 && !reused {
			t.Fatalf("request %d did not reuse the connection", i)
		}
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (w *statusRecorder) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
