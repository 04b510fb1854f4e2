package keyfuncs_test

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// hashed computes the documented hashed form independently of the package.
func hashed(v string) string {
	sum := sha256.Sum256([]byte(v))
	return "#" + base64.RawURLEncoding.EncodeToString(sum[:])
}

// TestHeaderHashesByDefault: a header value (an API key, a token) never
// becomes a key verbatim unless Verbatim says so, so that it reaches neither
// the store's key names nor observers.
func TestHeaderHashesByDefault(t *testing.T) {
	t.Parallel()
	kf := keyfuncs.Header("X-API-Key")
	for _, v := range []string{"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a", "team-42"} {
		got, err := kf(keyfuncstest.New("192.0.2.1:1", "X-API-Key", v))
		if err != nil || got != hashed(v) || (len(v) > 8 && strings.Contains(got, v)) {
			t.Fatalf("key(%q) = %q, %v; want %q", v, got, err, hashed(v))
		}
	}
}

func TestHeaderValues(t *testing.T) {
	t.Parallel()
	kf := keyfuncs.Header("X-API-Key", keyfuncs.Verbatim())
	long := strings.Repeat("k", 128)
	for _, tc := range []struct {
		name, value, want string
	}{
		{"verbatim", "key-123_ABC.x~y", "key-123_ABC.x~y"},
		{"verbatim at the limit", long, long},
		{"over the limit hashed", long + "k", hashed(long + "k")},
		{"CRLF hashed", "abc\r\nSet-Cookie: x", hashed("abc\r\nSet-Cookie: x")},
		{"control byte hashed", "abc\x01", hashed("abc\x01")},
		{"DEL hashed", "abc\x7f", hashed("abc\x7f")},
		{"space hashed", "abc def", hashed("abc def")},
		{"tab hashed", "abc\tdef", hashed("abc\tdef")},
		{"non-ASCII hashed", "clé", hashed("clé")},
		{"leading # hashed", "#abc", hashed("#abc")},
		{"leading ~ hashed", "~abc", hashed("~abc")},
		{"leading punctuation hashed", "-abc", hashed("-abc")},
		{"single char", "a", "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kf(keyfuncstest.New("192.0.2.1:1", "X-Api-Key", tc.value))
			if err != nil || got != tc.want {
				t.Fatalf("key = %q, %v; want %q", got, err, tc.want)
			}
			if strings.HasPrefix(got, "#") && len(got) != 44 {
				t.Fatalf("hashed key %q has length %d, want 44", got, len(got))
			}
			for i := 0; i < len(got); i++ {
				if got[i] <= ' ' || got[i] >= 0x7f {
					t.Fatalf("key %q has byte %#x", got, got[i])
				}
			}
		})
	}
	if a, b := hashed("x y"), hashed("x z"); a == b {
		t.Fatal("distinct values must hash apart")
	}
}

func TestHeaderMaxVerbatim(t *testing.T) {
	t.Parallel()
	kf := keyfuncs.Header("X-API-Key", keyfuncs.Verbatim(), keyfuncs.MaxVerbatim(4))
	for value, want := range map[string]string{"abcd": "abcd", "abcde": hashed("abcde")} {
		got, err := kf(keyfuncstest.New("192.0.2.1:1", "X-API-Key", value))
		if err != nil || got != want {
			t.Errorf("key(%q) = %q, %v; want %q", value, got, err, want)
		}
	}
	clamped := keyfuncs.Header("X-API-Key", keyfuncs.Verbatim(), keyfuncs.MaxVerbatim(0))
	if got, _ := clamped(keyfuncstest.New("", "X-API-Key", "ab")); got != hashed("ab") {
		t.Errorf("MaxVerbatim(0) clamps to 1: key = %q", got)
	}
}

func TestHeaderTooLongRefused(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("a", 4096+1)
	for name, kf := range map[string]keyfuncs.KeyFunc{
		"refuse":   keyfuncs.Header("X-API-Key", keyfuncs.RefuseIfMissing(401)),
		"skip":     keyfuncs.Header("X-API-Key", keyfuncs.SkipIfMissing()),
		"fallback": keyfuncs.Header("X-API-Key", keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP)),
	} {
		_, err := kf(keyfuncstest.New("192.0.2.1:1", "X-API-Key", huge))
		var mk *keyfuncs.MissingKeyError
		if !errors.As(err, &mk) || mk.Status != 400 || mk.Source != "header X-API-Key" {
			t.Errorf("%s: err = %v, want *MissingKeyError 400", name, err)
		}
	}
	atLimit := strings.Repeat("a", 4096)
	if got, err := keyfuncs.Header("X-API-Key")(keyfuncstest.New("", "X-API-Key", atLimit)); err != nil || got != hashed(atLimit) {
		t.Errorf("value of maxHeaderValue bytes: %q, %v", got, err)
	}
}

func TestHeaderMissing(t *testing.T) {
	t.Parallel()
	fbErr := &keyfuncs.MissingKeyError{Source: "client address", Status: 400}
	for _, tc := range []struct {
		name       string
		kf         keyfuncs.KeyFunc
		req        *keyfuncstest.Request
		want       string
		wantStatus int   // a *MissingKeyError with this status
		wantErr    error // or this error
	}{
		{name: "default refuses 400", kf: keyfuncs.Header("X-API-Key"), req: keyfuncstest.New("192.0.2.1:1"), wantStatus: 400},
		{name: "empty value is missing", kf: keyfuncs.Header("X-API-Key"), req: keyfuncstest.New("192.0.2.1:1", "X-API-Key", ""), wantStatus: 400},
		{name: "refuse 401", kf: keyfuncs.Header("X-API-Key", keyfuncs.RefuseIfMissing(401)), req: keyfuncstest.New("192.0.2.1:1"), wantStatus: 401},
		{name: "refuse out of range becomes 400", kf: keyfuncs.Header("X-API-Key", keyfuncs.RefuseIfMissing(200)), req: keyfuncstest.New("192.0.2.1:1"), wantStatus: 400},
		{name: "skip", kf: keyfuncs.Header("X-API-Key", keyfuncs.SkipIfMissing()), req: keyfuncstest.New("192.0.2.1:1"), wantErr: keyfuncs.ErrSkip},
		{name: "fallback to IP", kf: keyfuncs.Header("X-API-Key", keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP)), req: keyfuncstest.New("192.0.2.1:1"), want: "~192.0.2.1"},
		{name: "fallback error passed on", kf: keyfuncs.Header("X-API-Key", keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP)), req: keyfuncstest.New("bad"), wantStatus: fbErr.Status},
		{name: "nil fallback keeps refusing", kf: keyfuncs.Header("X-API-Key", keyfuncs.FallbackIfMissing(nil)), req: keyfuncstest.New("192.0.2.1:1"), wantStatus: 400},
		{name: "zero option ignored", kf: keyfuncs.Header("X-API-Key", keyfuncs.HeaderOption{}), req: keyfuncstest.New("192.0.2.1:1"), wantStatus: 400},
		{name: "last option wins", kf: keyfuncs.Header("X-API-Key", keyfuncs.SkipIfMissing(), keyfuncs.RefuseIfMissing(401)), req: keyfuncstest.New("192.0.2.1:1"), wantStatus: 401},
		{name: "present value not affected by fallback", kf: keyfuncs.Header("X-API-Key", keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP)), req: keyfuncstest.New("192.0.2.1:1", "X-API-Key", "192.0.2.1"), want: hashed("192.0.2.1")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.kf(tc.req)
			switch {
			case tc.wantStatus != 0:
				var mk *keyfuncs.MissingKeyError
				if !errors.As(err, &mk) || mk.Status != tc.wantStatus {
					t.Fatalf("got %q, %v; want *MissingKeyError %d", got, err, tc.wantStatus)
				}
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("got %q, %v; want %v", got, err, tc.wantErr)
				}
			default:
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
			}
		})
	}
}

func TestMissingKeyErrorText(t *testing.T) {
	t.Parallel()
	_, err := keyfuncs.Header("X-API-Key")(keyfuncstest.New(""))
	if got, want := err.Error(), "keyfuncs: missing rate-limit key: header X-API-Key"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}
