package keyfuncs

import (
	"strings"

	"github.com/ratelimit-go/ratelimit/internal/keycheck"
)

// separator joins the parts of a composed key.
const separator = '|'

// Constant returns a KeyFunc that gives every request the same key: a global
// limit shared by all clients. Safe for concurrent use.
func Constant(key string) KeyFunc {
	return func(Request) (string, error) { return key, nil }
}

// Compose returns a KeyFunc joining the keys of fns with "|", each part
// escaped ('%', '|' and control bytes as %XX) so that distinct lists give
// distinct keys: Compose(Method, Route) gives "GET|/users/{id}". The first
// error of a part is returned as is; nil functions are ignored.
func Compose(fns ...KeyFunc) KeyFunc {
	parts := make([]KeyFunc, 0, len(fns))
	for _, f := range fns {
		if f != nil {
			parts = append(parts, f)
		}
	}
	composed := func(r Request) (string, error) {
		var stack [8]string
		keys := stack[:0]
		n := len(parts) - 1
		for _, f := range parts {
			k, err := f(r)
			if err != nil {
				return "", err
			}
			keys = append(keys, k)
			n += escapedLen(k)
		}
		if n <= 0 {
			return "", nil
		}
		var b strings.Builder
		b.Grow(n)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(separator)
			}
			writeEscaped(&b, k)
		}
		return b.String(), nil
	}
	for _, f := range parts {
		if err := keycheck.Err(f); err != nil {
			return keycheck.Mark(KeyFunc(composed), err)
		}
	}
	return composed
}

// needsEscape reports whether c is escaped inside a composed key.
func needsEscape(c byte) bool { return c == '%' || c == separator || c < 0x20 || c == 0x7f }

// escapedLen returns the length of s once escaped.
func escapedLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n += 2
		}
	}
	return n
}

// writeEscaped writes s to b, escaping the bytes needsEscape selects.
func writeEscaped(b *strings.Builder, s string) {
	const hex = "0123456789ABCDEF"
	start := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; needsEscape(c) {
			b.WriteString(s[start:i])
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}
