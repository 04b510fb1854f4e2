package keyfuncs

import (
	"fmt"
	"reflect"
	"strconv"
)

// ContextValue returns a KeyFunc that keys requests by a value earlier
// middleware stored for the request (the authenticated caller's ID), looked
// up with Request.Context().Value, which also finds Gin's and Echo's
// Context.Set and Fiber's Ctx.Locals:
//
//	// after an auth middleware that ran ctx = context.WithValue(ctx, userKey{}, "u42")
//	ratelimit.WithKeyFunc(keyfuncs.ContextValue(userKey{}))
//
// The value may be a string, a []byte or an integer, of a named type too
// (type UserID int64), or a fmt.Stringer; any other, nil or "" is missing,
// refused with 401 by default (Header's options change that). Safe values
// are used verbatim, others hashed as Header does; Hashed hashes every
// value.
func ContextValue(key any, opts ...HeaderOption) KeyFunc {
	source := "context value " + fmt.Sprintf("%T", key)
	if s := valueString(key); s != "" {
		source = "context value " + strconv.Quote(s)
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
	if s, ok := v.(fmt.Stringer); ok {
		return s.String()
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.String:
		return rv.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return string(rv.Bytes())
		}
	}
	return ""
}
