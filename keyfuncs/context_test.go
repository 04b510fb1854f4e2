package keyfuncs_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

type ctxKey string

type stringer struct{}

// Named types, as applications declare their IDs.
type (
	userID  string
	account int64
	port    uint16
	token   []byte
)

func (stringer) String() string { return "tenant-7" }

func TestContextValue(t *testing.T) {
	t.Parallel()
	with := func(v any) *keyfuncstest.Request {
		r := keyfuncstest.New("192.0.2.1:1")
		r.Ctx = context.WithValue(context.Background(), ctxKey("user"), v)
		return r
	}
	kf := keyfuncs.ContextValue(ctxKey("user"))
	for _, tc := range []struct {
		v    any
		want string
	}{
		{"u42", "u42"}, {[]byte("u43"), "u43"}, {42, "42"}, {int64(-7), hashed("-7")}, {uint32(9), "9"},
		{stringer{}, "tenant-7"}, {"a b", hashed("a b")}, {strings.Repeat("x", 200), hashed(strings.Repeat("x", 200))},
		{strings.Repeat("y", 5000), hashed(strings.Repeat("y", 5000))},
		{userID("u44"), "u44"}, {account(45), "45"}, {int16(46), "46"}, {port(47), "47"}, {uint64(48), "48"}, {token("u49"), "u49"},
	} {
		if got, err := kf(with(tc.v)); err != nil || got != tc.want {
			t.Errorf("value %v: key %q, %v; want %q", tc.v, got, err, tc.want)
		}
	}
	if got, _ := keyfuncs.ContextValue(ctxKey("user"), keyfuncs.Hashed())(with("u42")); got != hashed("u42") {
		t.Errorf("Hashed: %q", got)
	}
	for _, missing := range []any{nil, "", 1.5, struct{}{}, userID(""), []int{1}} {
		_, err := kf(with(missing))
		var mk *keyfuncs.MissingKeyError
		if !errors.As(err, &mk) || mk.Status != 401 || mk.Source != `context value "user"` {
			t.Errorf("value %#v: %v, want a *MissingKeyError of status 401 naming the key", missing, err)
		}
	}
	// A key of a type with no text is named by its type.
	type unnamed struct{}
	_, err := keyfuncs.ContextValue(unnamed{})(keyfuncstest.New(""))
	if err == nil || !strings.HasSuffix(err.Error(), "context value keyfuncs_test.unnamed") {
		t.Errorf("missing under a struct key: %v", err)
	}
	fb := keyfuncs.ContextValue(ctxKey("user"), keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP))
	if got, err := fb(keyfuncstest.New("192.0.2.1:1")); err != nil || got != "~192.0.2.1" {
		t.Errorf("fallback: %q, %v", got, err)
	}
	if _, err := keyfuncs.ContextValue(ctxKey("user"), keyfuncs.SkipIfMissing())(keyfuncstest.New("")); !errors.Is(err, keyfuncs.ErrSkip) {
		t.Errorf("skip: %v", err)
	}
}
