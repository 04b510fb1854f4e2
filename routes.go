package ratelimit

import (
	"slices"
	"strings"
)

// validateRoute checks a route table entry for the mistakes that would make
// it match nothing on any framework, returning a *RouteError.
func validateRoute(method, pattern string) error {
	bad := func(reason string) error { return &RouteError{Method: method, Pattern: pattern, Reason: reason} }
	if method != "" && !slices.Contains(methods, method) {
		switch {
		case slices.Contains(methods, strings.ToUpper(method)):
			return bad("methods are case-sensitive and written in upper case (" + strings.ToUpper(method) + ")")
		case method == "*" || method == "ANY":
			return bad("\"\" is the method that matches every method")
		}
		return bad("not an HTTP method a router serves; want one of " + strings.Join(methods[:9], ", ") + ", a WebDAV method, or \"\" for every method")
	}
	switch {
	case pattern == "":
		return bad("empty route pattern")
	case strings.ContainsAny(pattern, " \t\r\n"):
		if i := strings.IndexAny(pattern, " \t"); i > 0 && isMethodToken(pattern[:i]) {
			return bad("the method goes in the method argument: WithRoute(" + quote(pattern[:i]) + ", " + quote(strings.TrimLeft(pattern[i:], " \t")) + ")")
		}
		return bad("a route pattern holds no white space")
	case pattern[0] != '/':
		return bad("a route pattern starts with \"/\" (" + quote("/"+pattern) + ")")
	}
	for i := 0; i < len(pattern); i++ {
		if c := pattern[i]; c < 0x20 || c == 0x7f {
			return bad("a route pattern holds no control bytes")
		}
	}
	return nil
}

// methods are the request methods a route table entry may name: those of
// RFC 9110, PATCH (RFC 5789), and WebDAV's (RFC 4918, 3253, 5323), which
// Echo and Gin route too.
var methods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE",
	"PROPFIND", "PROPPATCH", "MKCOL", "COPY", "MOVE", "LOCK", "UNLOCK", "REPORT", "SEARCH"}

func quote(s string) string { return `"` + s + `"` }

// isMethodToken reports whether s looks like a method: upper-case token
// characters only.
func isMethodToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isTokenChar(c) || (c >= 'a' && c <= 'z') {
			return false
		}
	}
	return s != ""
}

// isTokenChar reports whether c is a tchar of RFC 9110.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// CheckPatterns is for adapters, when they wrap a handler: it returns a
// *RouteError for the first route table entry for which reason (given the
// method and pattern) returns an explanation, nil when there is none.
func (m *Middleware) CheckPatterns(reason func(method, pattern string) string) error {
	if m == nil {
		return errNilMiddleware
	}
	for _, r := range m.s.routes {
		if why := reason(r.method, r.pattern); why != "" {
			return &RouteError{Method: r.method, Pattern: r.pattern, Reason: why}
		}
	}
	return nil
}
