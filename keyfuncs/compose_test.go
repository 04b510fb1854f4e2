package keyfuncs_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// splitComposed inverts Compose's encoding: it splits on the separator and
// undoes the %XX escapes. It fails the test on an escape Compose never makes.
func splitComposed(t testing.TB, key string) []string {
	t.Helper()
	var parts []string
	for p := range strings.SplitSeq(key, "|") {
		var b strings.Builder
		for i := 0; i < len(p); i++ {
			if p[i] != '%' {
				b.WriteByte(p[i])
				continue
			}
			if i+2 >= len(p) {
				t.Fatalf("truncated escape in %q", key)
			}
			var c byte
			for _, h := range []byte(p[i+1 : i+3]) {
				switch {
				case '0' <= h && h <= '9':
					c = c<<4 | (h - '0')
				case 'A' <= h && h <= 'F':
					c = c<<4 | (h - 'A' + 10)
				default:
					t.Fatalf("bad escape in %q", key)
				}
			}
			b.WriteByte(c)
			i += 2
		}
		parts = append(parts, b.String())
	}
	return parts
}

func composeConstants(parts ...string) keyfuncs.KeyFunc {
	fns := make([]keyfuncs.KeyFunc, len(parts))
	for i, p := range parts {
		fns[i] = keyfuncs.Constant(p)
	}
	return keyfuncs.Compose(fns...)
}

func TestComposeEscaping(t *testing.T) {
	t.Parallel()
	r := keyfuncstest.New("192.0.2.1:1")
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"GET", "/users/{id}"}, "GET|/users/{id}"},
		{[]string{"a:b", "c"}, "a:b|c"},
		{[]string{"a", "b:c"}, "a|b:c"},
		{[]string{"a|b", "c"}, "a%7Cb|c"},
		{[]string{"a", "b|c"}, "a|b%7Cc"},
		{[]string{"%7C"}, "%257C"},
		{[]string{"|"}, "%7C"},
		{[]string{"x\r\ny"}, "x%0D%0Ay"},
		{[]string{"\x7f"}, "%7F"},
		{[]string{"", ""}, "|"},
		{[]string{"2001:db8::/64", "/a"}, "2001:db8::/64|/a"},
		{[]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, "1|2|3|4|5|6|7|8|9|10"},
	} {
		got, err := composeConstants(tc.parts...)(r)
		if err != nil || got != tc.want {
			t.Errorf("Compose(%q) = %q, %v; want %q", tc.parts, got, err, tc.want)
			continue
		}
		if back := splitComposed(t, got); strings.Join(back, "\x00") != strings.Join(tc.parts, "\x00") {
			t.Errorf("decoding %q gives %q, want %q", got, back, tc.parts)
		}
	}
}

func TestComposeErrors(t *testing.T) {
	t.Parallel()
	called := false
	later := func(keyfuncs.Request) (string, error) { called = true; return "x", nil }
	skip := func(keyfuncs.Request) (string, error) { return "", keyfuncs.ErrSkip }
	r := keyfuncstest.New("bad address")

	if _, err := keyfuncs.Compose(keyfuncs.Method, skip, later)(r); !errors.Is(err, keyfuncs.ErrSkip) || called {
		t.Fatalf("skip: err = %v, later called = %v", err, called)
	}
	var mk *keyfuncs.MissingKeyError
	if _, err := keyfuncs.Compose(keyfuncs.RemoteIP, later)(r); !errors.As(err, &mk) || called {
		t.Fatalf("missing: err = %v, later called = %v", err, called)
	}
}

func TestComposeNilAndEmpty(t *testing.T) {
	t.Parallel()
	r := keyfuncstest.New("192.0.2.1:1")
	if got, err := keyfuncs.Compose(nil, keyfuncs.Constant("a"), nil)(r); err != nil || got != "a" {
		t.Fatalf("nil parts: %q, %v", got, err)
	}
	if got, err := keyfuncs.Compose()(r); err != nil || got != "" {
		t.Fatalf("no parts: %q, %v", got, err)
	}
}

func TestComposeRealKeys(t *testing.T) {
	t.Parallel()
	r := &keyfuncstest.Request{Verb: "POST", URLPath: "/users/7", Pattern: "/users/{id}", Remote: "[2001:db8:1:2::3]:9"}
	got, err := keyfuncs.Compose(keyfuncs.Constant("api"), keyfuncs.Method, keyfuncs.Route, keyfuncs.RemoteIP)(r)
	if want := "api|POST|/users/{id}|2001:db8:1:2::/64"; err != nil || got != want {
		t.Fatalf("key = %q, %v; want %q", got, err, want)
	}
}

// FuzzCompose checks that Compose is injective on two parts: decoding the key
// gives the parts back, so two different pairs can never share a key.
func FuzzCompose(f *testing.F) {
	f.Add("a:b", "c")
	f.Add("a|b", "c")
	f.Add("%7C", "\r\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		key, err := composeConstants(a, b)(keyfuncstest.New(""))
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(key, "\r\n\x00") {
			t.Fatalf("key %q carries a raw control byte", key)
		}
		back := splitComposed(t, key)
		if len(back) != 2 || back[0] != a || back[1] != b {
			t.Fatalf("Compose(%q, %q) = %q decodes to %q", a, b, key, back)
		}
	})
}
