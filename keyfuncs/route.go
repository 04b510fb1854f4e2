package keyfuncs

// unmatchedRoute is the one key of every request that matched no route, so
// that probing unknown paths draws on one quota.
const unmatchedRoute = "(unmatched)"

// Route is a KeyFunc that keys requests by the pattern of the route that
// matched ("/users/{id}"), never the raw path; "(unmatched)" when none did.
func Route(r Request) (string, error) {
	if p := r.Route(); p != "" {
		return p, nil
	}
	return unmatchedRoute, nil
}

// otherMethod is the key Method gives any method not defined by RFC 9110 or
// RFC 5789.
const otherMethod = "OTHER"

// Method is a KeyFunc that keys requests by their method: those of RFC 9110
// and PATCH as themselves (case-sensitive), any other as "OTHER", so that
// invented methods cannot create unbounded keys.
func Method(r Request) (string, error) {
	switch m := r.Method(); m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE":
		return m, nil
	}
	return otherMethod, nil
}
