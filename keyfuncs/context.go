package keyfuncs

import (
	"fmt"
	"strconv"
)

// ContextValue returns a KeyFunc that keys requests by a value that earlier
// middleware stored for the request, typically the authenticated caller's
// user or tenant ID left by authentication middleware. It looks key up with
// Request.Context().Value, which on Gin, Echo and Fiber also finds values
// stored with Context.Set (Gin, Echo, for a string key) or Ctx.Locals
// (Fiber), so one key function works on every adapter:
//
//	// after an auth middleware that ran ctx = context.WithValue(ctx, userKey{}, "u42")
//	ratelimit.WithKeyFunc(keyfuncs.ContextValue(userKey{}))
//
// The value may be a string, a []byte, any integer type or a fmt.Stringer;
// an empty string, nil, or a value of any other type counts as missing. A
// missing value is refused with a *MissingKeyError of status 401 by default
// (the request reached the limiter unauthenticated); the options of Header
// change that (RefuseIfMissing, FallbackIfMissing, SkipIfMissing).
//
// IDs are not secrets, so a value is used verbatim when it is safe (printable
// ASCII without spaces, starting with a letter or digit, at most MaxVerbatim
// bytes) and hashed as Header hashes otherwise; Hashed hashes every value.
// The returned KeyFunc is safe for concurrent use.
func ContextValue(key any, opts ...HeaderOption) KeyFunc {
	source := "context value"
	if s, ok := key.(fmt.Stringer); ok {
		source += " " + s.String()
	} else if s, ok := key.(string); ok {
		source += " " + strconv.Quote(s)
	}
	h := &headerKey{source: source, status: 401, verbatim: true, maxVerbatim: defaultMaxVerbatim}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(h)
		}
	}
	return func(r Request) (string, error) {
		v := valueString(r.Context().Value(key))
		switch {
		case len(v) > maxHeaderValue:
			return hashKey(v), nil
		case v != "":
			if h.verbatim && verbatim(v, h.maxVerbatim) {
				return v, nil
			}
			return hashKey(v), nil
		}
		return h.missing(r)
	}
}

// valueString converts a context value to a key, "" when it cannot.
func valueString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case fmt.Stringer:
		return v.String()
	}
	return ""
}
