package keyfuncs

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/textproto"

	"github.com/ratelimit-go/ratelimit/internal/keycheck"
)

// Limits on header values used as keys.
const (
	// defaultMaxVerbatim is the default length above which a header value is
	// hashed instead of used verbatim.
	defaultMaxVerbatim = 128
	// maxHeaderValue is the longest header value Header accepts; a longer
	// one is refused with 400 rather than hashed, so that a client cannot
	// make every check hash a huge value.
	maxHeaderValue = 4096
)

// headerKey is the configuration of a Header key function.
type headerKey struct {
	name        string
	source      string // "header <name>", for MissingKeyError
	status      int    // refuse with this status when missing, if fallback and skip are unset
	fallback    KeyFunc
	skip        bool
	verbatim    bool // use safe values as they are instead of hashing all
	maxVerbatim int
}

// HeaderOption configures Header. The zero HeaderOption changes nothing.
type HeaderOption struct{ apply func(*headerKey) }

// RefuseIfMissing makes a request without the header fail with a
// *MissingKeyError carrying status, typically 400 or 401 (401 responses
// should carry a WWW-Authenticate header, which is the caller's to set). A
// status outside 400..499 is replaced by 400. This is the default, with 400.
func RefuseIfMissing(status int) HeaderOption {
	return HeaderOption{func(h *headerKey) {
		if status < 400 || status > 499 {
			status = 400
		}
		h.status, h.fallback, h.skip = status, nil, false
	}}
}

// FallbackIfMissing makes a request without the header use the key of fb
// instead, e.g. the client IP. The fallback key is prefixed with "~" so it
// never equals a header key: a client cannot send the header with someone
// else's IP address as its value to drain that address's quota. A nil fb
// leaves the default, RefuseIfMissing(400).
func FallbackIfMissing(fb KeyFunc) HeaderOption {
	return HeaderOption{func(h *headerKey) {
		if fb != nil {
			h.fallback, h.skip = fb, false
		}
	}}
}

// SkipIfMissing makes a request without the header return ErrSkip: it is not
// rate-limited at all. Use it only when another limit covers such requests.
func SkipIfMissing() HeaderOption {
	return HeaderOption{func(h *headerKey) { h.skip, h.fallback = true, nil }}
}

// Verbatim makes Header use a safe value (see Header) as the key as it is
// instead of hashing it: only for values that are not secret, since the key
// is stored in Redis key names and shown to observers.
func Verbatim() HeaderOption {
	return HeaderOption{func(h *headerKey) { h.verbatim = true }}
}

// Hashed makes ContextValue hash every value, as Header does by default.
func Hashed() HeaderOption {
	return HeaderOption{func(h *headerKey) { h.verbatim = false }}
}

// MaxVerbatim sets the length (1 to 4096, clamped; default 128) above which
// a value used verbatim (Verbatim, ContextValue) is hashed instead.
func MaxVerbatim(n int) HeaderOption {
	return HeaderOption{func(h *headerKey) { h.maxVerbatim = max(1, min(n, maxHeaderValue)) }}
}

// Header returns a KeyFunc that keys requests by the first value of the
// named header, e.g. an API key or a tenant ID.
//
// By default the key is "#" and the unpadded base64url SHA-256 of the value:
// such values are usually secrets, and hashing keeps them out of Redis key
// names and of observers (Event.Key). The hash is unkeyed, so every
// instance shares one quota; it hides high-entropy secrets, not guessable
// values. With Verbatim the key is the value itself when it is at most
// MaxVerbatim bytes of printable ASCII without spaces starting with a letter
// or digit, and the hash otherwise. Verbatim, hashed ("#...") and fallback
// ("~...") keys never collide. A value longer than 4096 bytes is refused
// (400). An empty or absent header is refused with 400 by default
// (RefuseIfMissing; see FallbackIfMissing, SkipIfMissing).
//
// Clients choose header values: key by one only once authentication has
// checked it (or by what authentication stored, with ContextValue), since a
// client sending a new value with each request gets a new quota each time,
// composed with its IP or not. A name that is not a header field name makes
// ratelimit.New fail with ErrInvalidOption.
func Header(name string, opts ...HeaderOption) KeyFunc {
	// The canonical form lets net/http's Header.Get skip its own
	// canonicalisation, which allocates for names like "X-API-Key".
	h := &headerKey{name: textproto.CanonicalMIMEHeaderKey(name), source: "header " + name, status: 400, maxVerbatim: defaultMaxVerbatim}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(h)
		}
	}
	switch {
	case !validFieldName(name):
		return keycheck.Mark(KeyFunc(h.key), fmt.Errorf("%w: Header(%q): not a header field name", ErrInvalidOption, name))
	case h.fallback != nil && keycheck.Err(h.fallback) != nil:
		return keycheck.Mark(KeyFunc(h.key), keycheck.Err(h.fallback))
	}
	return h.key
}

// validFieldName reports whether name is a field name of RFC 9110: a
// non-empty token.
func validFieldName(name string) bool {
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return false
		}
	}
	return name != ""
}

// key is the KeyFunc returned by Header.
func (h *headerKey) key(r Request) (string, error) {
	v := r.Header(h.name)
	switch {
	case len(v) > maxHeaderValue:
		return "", &MissingKeyError{Source: h.source, Status: 400}
	case v != "":
		if h.verbatim && verbatim(v, h.maxVerbatim) {
			return v, nil
		}
		return hashKey(v), nil
	}
	return h.missing(r)
}

// missing applies the missing-value policy.
func (h *headerKey) missing(r Request) (string, error) {
	switch {
	case h.skip:
		return "", ErrSkip
	case h.fallback != nil:
		k, err := h.fallback(r)
		if err != nil {
			return "", err
		}
		return "~" + k, nil
	}
	return "", &MissingKeyError{Source: h.source, Status: h.status}
}

// verbatim reports whether v may be used as a key as is.
func verbatim(v string, maxLen int) bool {
	if len(v) > maxLen || !isAlnum(v[0]) {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return true
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// hashKey returns "#" and the unpadded base64url SHA-256 of v.
func hashKey(v string) string {
	sum := sha256.Sum256([]byte(v))
	var buf [1 + 43]byte
	buf[0] = '#'
	base64.RawURLEncoding.Encode(buf[1:], sum[:])
	return string(buf[:])
}
