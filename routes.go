package ratelimit

import "strings"

// validateRoute checks a route table entry for the mistakes that would make
// it match nothing on any framework, returning a *RouteError.
func validateRoute(method, pattern string) error {
	bad := func(reason string) error { return &RouteError{Method: method, Pattern: pattern, Reason: reason} }
	for i := 0; i < len(method); i++ {
		c := method[i]
		switch {
		case c >= 'a' && c <= 'z':
			return bad("methods are case-sensitive and written in upper case (" + strings.ToUpper(method) + ")")
		case !isTokenChar(c):
			return bad("the method is not an HTTP token")
		}
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

// CheckPatterns is for adapters, at the moment they wrap a handler: it calls
// reason with the pattern of every route table entry and returns a
// *RouteError for the first pattern reason objects to (returns a non-empty
// explanation for), such as a wildcard written in another framework's
// syntax. It returns nil when every pattern is acceptable.
func (m *Middleware) CheckPatterns(reason func(pattern string) string) error {
	for _, r := range m.s.routes {
		if why := reason(r.pattern); why != "" {
			return &RouteError{Method: r.method, Pattern: r.pattern, Reason: why}
		}
	}
	return nil
}
