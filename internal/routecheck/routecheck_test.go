package routecheck

import "testing"

func TestUnserved(t *testing.T) {
	t.Parallel()
	routes := []Route{{"POST", "/login"}, {"GET", "/users/:id"}}
	for _, c := range []struct {
		method, pattern string
		served          bool
	}{
		{"POST", "/login", true},
		{"", "/login", true},
		{"POST", "/logni", false},
		{"GET", "/login", false},
		{"HEAD", "/users/:id", true},
		{"DELETE", "/users/:id", false},
	} {
		if got := unserved(c.method, c.pattern, routes) == ""; got != c.served {
			t.Errorf("%s %s: served %v, want %v", c.method, c.pattern, got, c.served)
		}
	}
	if unserved("POST", "/nowhere", nil) != "" {
		t.Error("an empty route list refuses an entry")
	}
}
