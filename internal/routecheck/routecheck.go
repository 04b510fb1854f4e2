// Package routecheck tells whether a framework's route list serves a route
// table entry, for the adapters' CheckPatterns.
package routecheck

// Route is one route of a framework's list: its method and its pattern as
// the framework spells it.
type Route struct{ Method, Path string }

// Unserved returns why routes do not serve the entry (method, pattern), ""
// when one of them does or when routes is empty (nothing to check against).
// An entry for every method ("") needs a route of any method; a HEAD entry
// is served by a GET route, as the routers serve HEAD.
func Unserved(method, pattern string, routes []Route) string {
	if len(routes) == 0 {
		return ""
	}
	for _, r := range routes {
		if r.Path == pattern && (method == "" || r.Method == method || method == "HEAD" && r.Method == "GET") {
			return ""
		}
	}
	return "the router serves no such route, so the entry would never apply"
}
