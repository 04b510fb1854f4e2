package keyfuncs

// unmatchedRoute is the key Route gives every request that matched no route:
// one shared key, so that probing many unknown paths draws on one quota
// instead of creating a key per path. It cannot be a route pattern, which
// never starts with "(".
const unmatchedRoute = "(unmatched)"

// Route is a KeyFunc that keys requests by the pattern of the route that
// matched ("/users/{id}" or "/users/:id"), never by the raw path, so all
// requests to one route share a key whatever their parameters. A request that
// matched no route gets "(unmatched)". Compose it with a client key for a
// per-client, per-route limit. Safe for concurrent use.
func Route(r Request) (string, error) {
	if p := r.Route(); p != "" {
		return p, nil
	}
	return unmatchedRoute, nil
}

// otherMethod is the key Method gives any method not defined by RFC 9110 or
// RFC 5789.
const otherMethod = "OTHER"

// Method is a KeyFunc that keys requests by their method: GET, HEAD, POST,
// PUT, PATCH, DELETE, CONNECT, OPTIONS and TRACE as themselves (methods are
// case-sensitive: "get" is not GET), and every other method as "OTHER",
// so that a client inventing methods cannot create unbounded keys. Safe for
// concurrent use.
func Method(r Request) (string, error) {
	switch m := r.Method(); m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE":
		return m, nil
	}
	return otherMethod, nil
}
