package keyfuncs_test

import (
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

func TestRoute(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ pattern, path, want string }{
		{"/users/{id}", "/users/42", "/users/{id}"},
		{"/users/{id}", "/users/43", "/users/{id}"},
		{"/users/:id", "/users/42", "/users/:id"},
		{"GET /items/{id...}", "/items/a/b", "GET /items/{id...}"},
		{"", "/no/such/path", "(unmatched)"},
		{"", "/another/unknown", "(unmatched)"},
	} {
		r := &keyfuncstest.Request{Verb: "GET", URLPath: tc.path, Pattern: tc.pattern}
		got, err := keyfuncs.Route(r)
		if err != nil || got != tc.want {
			t.Errorf("Route(pattern %q, path %q) = %q, %v; want %q", tc.pattern, tc.path, got, err, tc.want)
		}
	}
}

func TestMethod(t *testing.T) {
	t.Parallel()
	for method, want := range map[string]string{
		"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH",
		"DELETE": "DELETE", "CONNECT": "CONNECT", "OPTIONS": "OPTIONS", "TRACE": "TRACE",
		"get": "OTHER", "PROPFIND": "OTHER", "": "OTHER",
		"GET\r\nX: y": "OTHER",
	} {
		got, err := keyfuncs.Method(&keyfuncstest.Request{Verb: method})
		if err != nil || got != want {
			t.Errorf("Method(%q) = %q, %v; want %q", method, got, err, want)
		}
	}
}
