package keyfuncs_test

import (
	"errors"
	"net/http"
	"net/netip"
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// trustedResolver trusts 10.0.0.0/8, 2001:db8:ffff::/48 and the IPv4-mapped
// form of 127.0.0.0/8, and reads the default headers.
func trustedResolver(t testing.TB, opts ...keyfuncs.IPOption) *keyfuncs.IPResolver {
	t.Helper()
	base := []keyfuncs.IPOption{keyfuncs.WithTrustedProxies(
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("2001:db8:ffff::/48"),
		netip.MustParsePrefix("::ffff:127.0.0.0/104"),
	)}
	res, err := keyfuncs.NewIPResolver(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ipCase is one row of the client IP tables: a request and the key expected,
// or "" when a *MissingKeyError is expected.
type ipCase struct {
	name    string
	remote  string
	headers []string // name, value pairs; a repeated name adds a line
	want    string
}

func runIPCases(t *testing.T, res *keyfuncs.IPResolver, cases []ipCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := keyfuncstest.New(tc.remote, tc.headers...)
			got, err := res.Key(r)
			if tc.want == "" {
				var mk *keyfuncs.MissingKeyError
				if !errors.As(err, &mk) || mk.Status != http.StatusBadRequest {
					t.Fatalf("Key(%q) = %q, %v; want *MissingKeyError with status 400", tc.remote, got, err)
				}
				if _, err := res.ClientIP(r); !errors.As(err, &mk) {
					t.Fatalf("ClientIP error = %v, want *MissingKeyError", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Key = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestRemoteAddrForms(t *testing.T) {
	t.Parallel()
	runIPCases(t, &keyfuncs.IPResolver{}, []ipCase{
		{name: "ipv4 with port", remote: "192.0.2.7:1234", want: "192.0.2.7"},
		{name: "ipv4 bare", remote: "192.0.2.7", want: "192.0.2.7"},
		{name: "ipv4 spaces", remote: " 192.0.2.7:80\t", want: "192.0.2.7"},
		{name: "ipv4 runs of blanks", remote: "\t \t192.0.2.7:80 \t ", want: "192.0.2.7"},
		{name: "ipv6 blanks", remote: " [2001:db8:1:2::9]:1\t", want: "2001:db8:1:2::/64"},
		{name: "only blanks", remote: " \t ", want: ""},
		{name: "blank inside", remote: "192.0.2.7 :80", want: ""},
		{name: "ipv4 bracketed", remote: "[192.0.2.7]:80", want: "192.0.2.7"},
		{name: "ipv6 bracketed with port", remote: "[2001:db8:1:2:3:4:5:6]:443", want: "2001:db8:1:2::/64"},
		{name: "ipv6 bare", remote: "2001:db8:1:2::9", want: "2001:db8:1:2::/64"},
		{name: "ipv6 bracketed no port", remote: "[2001:db8:1:2::9]", want: "2001:db8:1:2::/64"},
		{name: "ipv6 same /64 same key", remote: "[2001:db8:1:2:ffff:ffff:ffff:ffff]:1", want: "2001:db8:1:2::/64"},
		{name: "ipv6 uppercase", remote: "[2001:DB8:1:2::9]:1", want: "2001:db8:1:2::/64"},
		{name: "ipv4-mapped bracketed", remote: "[::ffff:192.0.2.7]:80", want: "192.0.2.7"},
		{name: "ipv4-mapped bare", remote: "::ffff:192.0.2.7", want: "192.0.2.7"},
		{name: "ipv4-mapped hex", remote: "[::ffff:c000:207]:80", want: "192.0.2.7"},
		{name: "zone bracketed", remote: "[fe80::1%eth0]:80", want: "fe80::/64"},
		{name: "zone bare", remote: "fe80::1%eth0", want: "fe80::/64"},
		{name: "loopback v6", remote: "[::1]:80", want: "::/64"},
		{name: "empty", remote: "", want: ""},
		{name: "unix socket", remote: "@", want: ""},
		{name: "hostname", remote: "example.com:80", want: ""},
		{name: "garbage", remote: "not an address", want: ""},
		{name: "port out of range", remote: "192.0.2.7:99999", want: ""},
		{name: "empty port", remote: "192.0.2.7:", want: ""},
		{name: "non-numeric port", remote: "192.0.2.7:http", want: ""},
		{name: "leading zero octet", remote: "192.0.2.07:80", want: ""},
		{name: "unclosed bracket", remote: "[2001:db8::1:80", want: ""},
		{name: "junk after bracket", remote: "[2001:db8::1]x", want: ""},
		{name: "bare ipv6 is not ip:port", remote: "2001:db8::1:99999", want: ""},
		{name: "empty zone", remote: "fe80::1%", want: ""},
	})
}

func TestForwardingHeadersFromUntrustedPeerIgnored(t *testing.T) {
	t.Parallel()
	res := trustedResolver(t, keyfuncs.WithProxyHeaders(keyfuncs.XForwardedFor, keyfuncs.XRealIP, keyfuncs.Forwarded))
	runIPCases(t, res, []ipCase{
		{name: "spoofed XFF", remote: "203.0.113.9:1", headers: []string{"X-Forwarded-For", "198.51.100.1"}, want: "203.0.113.9"},
		{name: "spoofed XFF with trusted-looking hops", remote: "203.0.113.9:1", headers: []string{"X-Forwarded-For", "198.51.100.1, 10.0.0.1"}, want: "203.0.113.9"},
		{name: "spoofed X-Real-IP", remote: "203.0.113.9:1", headers: []string{"X-Real-IP", "198.51.100.1"}, want: "203.0.113.9"},
		{name: "spoofed Forwarded", remote: "203.0.113.9:1", headers: []string{"Forwarded", "for=198.51.100.1"}, want: "203.0.113.9"},
		{name: "untrusted ipv6 peer", remote: "[2001:db8:1::1]:1", headers: []string{"X-Forwarded-For", "198.51.100.1"}, want: "2001:db8:1::/64"},
	})
	// The zero resolver trusts nobody, not even loopback.
	runIPCases(t, &keyfuncs.IPResolver{}, []ipCase{
		{name: "zero resolver", remote: "127.0.0.1:1", headers: []string{"X-Forwarded-For", "198.51.100.1", "X-Real-IP", "198.51.100.2"}, want: "127.0.0.1"},
	})
}

func TestXForwardedFor(t *testing.T) {
	t.Parallel()
	const xff = "X-Forwarded-For"
	runIPCases(t, trustedResolver(t), []ipCase{
		{name: "one hop", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1"}, want: "198.51.100.1"},
		{name: "rightmost untrusted, not leftmost", remote: "10.0.0.1:1", headers: []string{xff, "6.6.6.6, 198.51.100.1, 10.0.0.2"}, want: "198.51.100.1"},
		{name: "forged trusted hop on the left", remote: "10.0.0.1:1", headers: []string{xff, "10.0.0.5, 198.51.100.1"}, want: "198.51.100.1"},
		{name: "all trusted: leftmost", remote: "10.0.0.1:1", headers: []string{xff, "10.0.0.3, 10.0.0.2"}, want: "10.0.0.3"},
		{name: "two lines", remote: "10.0.0.1:1", headers: []string{xff, "6.6.6.6", xff, "198.51.100.1, 10.0.0.2"}, want: "198.51.100.1"},
		{name: "forged first line", remote: "10.0.0.1:1", headers: []string{xff, "6.6.6.6", xff, "198.51.100.1"}, want: "198.51.100.1"},
		{name: "walk crosses lines", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1", xff, "10.0.0.2"}, want: "198.51.100.1"},
		{name: "garbage rightmost: peer", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1, garbage"}, want: "10.0.0.1"},
		{name: "garbage after trusted hop: that hop", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1, unknown, 10.0.0.2"}, want: "10.0.0.2"},
		{name: "empty elements skipped", remote: "10.0.0.1:1", headers: []string{xff, " , 198.51.100.1, , "}, want: "198.51.100.1"},
		{name: "only commas: peer", remote: "10.0.0.1:1", headers: []string{xff, ", ,"}, want: "10.0.0.1"},
		{name: "ipv4 with port", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1:8080"}, want: "198.51.100.1"},
		{name: "ipv6 bracketed with port", remote: "10.0.0.1:1", headers: []string{xff, "[2001:db8:aa:bb::1]:4711"}, want: "2001:db8:aa:bb::/64"},
		{name: "ipv6 bare", remote: "10.0.0.1:1", headers: []string{xff, "2001:db8:aa:bb:cc::1"}, want: "2001:db8:aa:bb::/64"},
		{name: "ipv4-mapped entry", remote: "10.0.0.1:1", headers: []string{xff, "::ffff:198.51.100.1"}, want: "198.51.100.1"},
		{name: "zoned entry", remote: "10.0.0.1:1", headers: []string{xff, "fe80::1%eth0"}, want: "fe80::/64"},
		{name: "mapped trusted peer", remote: "[::ffff:10.0.0.1]:1", headers: []string{xff, "198.51.100.1"}, want: "198.51.100.1"},
		{name: "ipv6 trusted peer", remote: "[2001:db8:ffff::1]:1", headers: []string{xff, "198.51.100.1"}, want: "198.51.100.1"},
		{name: "mapped trusted prefix", remote: "127.0.0.1:1", headers: []string{xff, "198.51.100.1"}, want: "198.51.100.1"},
		{name: "trusted ipv6 hop skipped", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1, [2001:db8:ffff::2]:1"}, want: "198.51.100.1"},
		{name: "XFF wins over X-Real-IP", remote: "10.0.0.1:1", headers: []string{xff, "198.51.100.1", "X-Real-IP", "198.51.100.2"}, want: "198.51.100.1"},
		{name: "X-Real-IP when no XFF", remote: "10.0.0.1:1", headers: []string{"X-Real-IP", "198.51.100.2"}, want: "198.51.100.2"},
		{name: "X-Real-IP with port", remote: "10.0.0.1:1", headers: []string{"X-Real-IP", "[2001:db8:5:6::7]:99"}, want: "2001:db8:5:6::/64"},
		{name: "X-Real-IP garbage: peer", remote: "10.0.0.1:1", headers: []string{"X-Real-IP", "1.2.3.4, 5.6.7.8"}, want: "10.0.0.1"},
		{name: "no header: peer", remote: "10.0.0.1:1", want: "10.0.0.1"},
		{name: "Forwarded not read by default", remote: "10.0.0.1:1", headers: []string{"Forwarded", "for=198.51.100.1"}, want: "10.0.0.1"},
		{name: "bad RemoteAddr still an error", remote: "garbage", headers: []string{xff, "198.51.100.1"}, want: ""},
	})
}

func TestProxyHeaderSelection(t *testing.T) {
	t.Parallel()
	realFirst := trustedResolver(t, keyfuncs.WithProxyHeaders(keyfuncs.XRealIP, keyfuncs.XForwardedFor))
	runIPCases(t, realFirst, []ipCase{
		{name: "order is precedence", remote: "10.0.0.1:1", headers: []string{"X-Forwarded-For", "198.51.100.1", "X-Real-IP", "198.51.100.2"}, want: "198.51.100.2"},
	})
	none := trustedResolver(t, keyfuncs.WithProxyHeaders())
	runIPCases(t, none, []ipCase{
		{name: "no headers configured", remote: "10.0.0.1:1", headers: []string{"X-Forwarded-For", "198.51.100.1"}, want: "10.0.0.1"},
	})
}

func TestForwarded(t *testing.T) {
	t.Parallel()
	const fwd = "Forwarded"
	res := trustedResolver(t, keyfuncs.WithProxyHeaders(keyfuncs.Forwarded))
	runIPCases(t, res, []ipCase{
		{name: "simple", remote: "10.0.0.1:1", headers: []string{fwd, "for=198.51.100.1"}, want: "198.51.100.1"},
		{name: "rfc example", remote: "10.0.0.1:1", headers: []string{fwd, `for=192.0.2.60;proto=http;by=203.0.113.43, for="[2001:db8:cafe::17]:4711"`}, want: "2001:db8:cafe::/64"},
		{name: "case-insensitive name", remote: "10.0.0.1:1", headers: []string{fwd, `For="198.51.100.1:80"`}, want: "198.51.100.1"},
		{name: "skips trusted hops", remote: "10.0.0.1:1", headers: []string{fwd, "for=6.6.6.6, for=198.51.100.1;proto=https, for=10.0.0.2"}, want: "198.51.100.1"},
		{name: "two lines", remote: "10.0.0.1:1", headers: []string{fwd, "for=6.6.6.6", fwd, "for=198.51.100.1"}, want: "198.51.100.1"},
		{name: "spaces around elements", remote: "10.0.0.1:1", headers: []string{fwd, " for=198.51.100.1 , for=10.0.0.2 "}, want: "198.51.100.1"},
		{name: "escaped quoted string", remote: "10.0.0.1:1", headers: []string{fwd, `for="\[2001:db8:1:2::1\]:80"`}, want: "2001:db8:1:2::/64"},
		{name: "unknown: peer", remote: "10.0.0.1:1", headers: []string{fwd, "for=unknown"}, want: "10.0.0.1"},
		{name: "obfuscated after trusted hop", remote: "10.0.0.1:1", headers: []string{fwd, "for=_hidden, for=10.0.0.2"}, want: "10.0.0.2"},
		{name: "element without for", remote: "10.0.0.1:1", headers: []string{fwd, "for=6.6.6.6, proto=https"}, want: "10.0.0.1"},
		{name: "unterminated quote", remote: "10.0.0.1:1", headers: []string{fwd, `for="198.51.100.1`}, want: "10.0.0.1"},
		{name: "repeated for", remote: "10.0.0.1:1", headers: []string{fwd, "for=198.51.100.1;for=6.6.6.6"}, want: "10.0.0.1"},
		{name: "repeated for after empty quoted", remote: "10.0.0.1:1", headers: []string{fwd, `for="";for=198.51.100.1`}, want: "10.0.0.1"},
		{name: "empty quoted for", remote: "10.0.0.1:1", headers: []string{fwd, `for=""`}, want: "10.0.0.1"},
		{name: "unquoted port breaks syntax", remote: "10.0.0.1:1", headers: []string{fwd, `for=198.51.100.1:80`}, want: "10.0.0.1"},
		{name: "comma inside quotes", remote: "10.0.0.1:1", headers: []string{fwd, `for="6.6.6.6,198.51.100.1"`}, want: "10.0.0.1"},
		{name: "missing equals", remote: "10.0.0.1:1", headers: []string{fwd, "for"}, want: "10.0.0.1"},
		{name: "empty value", remote: "10.0.0.1:1", headers: []string{fwd, "for="}, want: "10.0.0.1"},
		{name: "junk after value", remote: "10.0.0.1:1", headers: []string{fwd, "for=198.51.100.1 x"}, want: "10.0.0.1"},
		{name: "control byte in quotes", remote: "10.0.0.1:1", headers: []string{fwd, "for=\"198.51.100.1\x01\""}, want: "10.0.0.1"},
	})
}

func TestPrefixOptions(t *testing.T) {
	t.Parallel()
	res, err := keyfuncs.NewIPResolver(keyfuncs.WithPrefixes(24, 48))
	if err != nil {
		t.Fatal(err)
	}
	runIPCases(t, res, []ipCase{
		{name: "ipv4 /24", remote: "198.51.100.77:1", want: "198.51.100.0/24"},
		{name: "mapped ipv4 uses the ipv4 prefix", remote: "[::ffff:198.51.100.77]:1", want: "198.51.100.0/24"},
		{name: "ipv6 /48", remote: "[2001:db8:1:2::9]:1", want: "2001:db8:1::/48"},
	})
	full, err := keyfuncs.NewIPResolver(keyfuncs.WithPrefixes(0, 128))
	if err != nil {
		t.Fatal(err)
	}
	runIPCases(t, full, []ipCase{
		{name: "ipv6 /128 is the address", remote: "[2001:DB8:0:0::9]:1", want: "2001:db8::9"},
		{name: "zone dropped at /128", remote: "[fe80::1%eth0]:1", want: "fe80::1"},
	})
}

func TestInvalidOptions(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]keyfuncs.IPOption{
		"ipv4 prefix -1":     keyfuncs.WithPrefixes(-1, 0),
		"ipv4 prefix 33":     keyfuncs.WithPrefixes(33, 0),
		"ipv6 prefix -1":     keyfuncs.WithPrefixes(0, -1),
		"ipv6 prefix 129":    keyfuncs.WithPrefixes(0, 129),
		"zero prefix":        keyfuncs.WithTrustedProxies(netip.Prefix{}),
		"unknown header":     keyfuncs.WithProxyHeaders(keyfuncs.ProxyHeader(9)),
		"zero header":        keyfuncs.WithProxyHeaders(keyfuncs.ProxyHeader(0)),
		"prefix beyond bits": keyfuncs.WithTrustedProxies(netip.PrefixFrom(netip.MustParseAddr("10.0.0.0"), 33)),
		"every IPv4 address": keyfuncs.WithTrustedProxies(netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("0.0.0.0/0")),
		"every IPv6 address": keyfuncs.WithTrustedProxies(netip.MustParsePrefix("::/0")),
		"every mapped IPv4":  keyfuncs.WithTrustedProxies(netip.MustParsePrefix("::ffff:0.0.0.0/96")),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := keyfuncs.NewIPResolver(opt)
			if !errors.Is(err, keyfuncs.ErrInvalidOption) || res != nil {
				t.Fatalf("NewIPResolver = %v, %v; want nil, ErrInvalidOption", res, err)
			}
		})
	}
	if _, err := keyfuncs.NewIPResolver(nil); err != nil {
		t.Fatalf("nil option: %v", err)
	}
}

func TestClientIPIsUnmasked(t *testing.T) {
	t.Parallel()
	res := trustedResolver(t)
	for _, tc := range []struct {
		remote, xff string
		want        netip.Addr
	}{
		{"[2001:db8:1:2::9]:1", "", netip.MustParseAddr("2001:db8:1:2::9")},
		{"[fe80::1%eth0]:1", "", netip.MustParseAddr("fe80::1")},
		{"[::ffff:192.0.2.7]:1", "", netip.MustParseAddr("192.0.2.7")},
		{"10.0.0.1:1", "2001:db8:aa:bb::1, 10.0.0.2", netip.MustParseAddr("2001:db8:aa:bb::1")},
	} {
		r := keyfuncstest.New(tc.remote)
		if tc.xff != "" {
			r.Headers.Set("X-Forwarded-For", tc.xff)
		}
		got, err := res.ClientIP(r)
		if err != nil || got != tc.want {
			t.Errorf("ClientIP(%q, %q) = %v, %v; want %v", tc.remote, tc.xff, got, err, tc.want)
		}
	}
}

// firstLineOnly is a Request without the optional HeaderValues.
type firstLineOnly struct{ *keyfuncstest.Request }

func (r firstLineOnly) HeaderValues() {} // a different signature: not the optional interface

func TestRequestWithoutHeaderValues(t *testing.T) {
	t.Parallel()
	var r keyfuncs.Request = firstLineOnly{keyfuncstest.New("10.0.0.1:1", "X-Forwarded-For", "198.51.100.1", "X-Forwarded-For", "198.51.100.2")}
	if _, ok := r.(interface{ HeaderValues(string) []string }); ok {
		t.Fatal("test request must not have HeaderValues")
	}
	got, err := trustedResolver(t).Key(r)
	if err != nil || got != "198.51.100.1" {
		t.Fatalf("Key = %q, %v; want the first line's address 198.51.100.1", got, err)
	}
}

func TestRemoteIP(t *testing.T) {
	t.Parallel()
	r := keyfuncstest.New("[2001:db8:1:2::9]:1", "X-Forwarded-For", "198.51.100.1")
	got, err := keyfuncs.RemoteIP(r)
	if err != nil || got != "2001:db8:1:2::/64" {
		t.Fatalf("RemoteIP = %q, %v", got, err)
	}
	var mk *keyfuncs.MissingKeyError
	if _, err := keyfuncs.RemoteIP(keyfuncstest.New("")); !errors.As(err, &mk) || mk.Source != "client address" {
		t.Fatalf("RemoteIP of empty RemoteAddr: %v", err)
	}
}

func TestProxyHeaderString(t *testing.T) {
	t.Parallel()
	for h, want := range map[keyfuncs.ProxyHeader]string{
		keyfuncs.XForwardedFor: "X-Forwarded-For", keyfuncs.XRealIP: "X-Real-IP",
		keyfuncs.Forwarded: "Forwarded", keyfuncs.ProxyHeader(7): "ProxyHeader(7)",
	} {
		if got := h.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

// addrPortRequest is a request view that also offers its peer address as a
// value, as the Fiber adapter's does; its text form says something else, so
// that a resolver that read it would give itself away.
type addrPortRequest struct {
	*keyfuncstest.Request
	ap netip.AddrPort
}

func (r addrPortRequest) RemoteAddrPort() netip.AddrPort { return r.ap }

// TestRemoteAddrPort: a request view's RemoteAddrPort gives the same keys as
// the same address in RemoteAddr (IPv4, IPv6 by /64, an IPv4-mapped address
// as IPv4, behind a trusted proxy too), and an invalid one falls back to
// RemoteAddr.
func TestRemoteAddrPort(t *testing.T) {
	plain, proxied := &keyfuncs.IPResolver{}, trustedResolver(t)
	for _, c := range []struct {
		res     *keyfuncs.IPResolver
		ap      string
		headers []string
	}{
		{plain, "192.0.2.7:1234", nil},
		{plain, "[2001:db8:1:2:3:4:5:6]:443", nil},
		{plain, "[::ffff:192.0.2.9]:80", nil},
		{proxied, "10.1.2.3:9", []string{"X-Forwarded-For", "198.51.100.4, 10.0.0.2"}},
		{proxied, "192.0.2.7:9", []string{"X-Forwarded-For", "198.51.100.4"}},
	} {
		ap := netip.MustParseAddrPort(c.ap)
		want, err := c.res.Key(keyfuncstest.New(c.ap, c.headers...))
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.res.Key(addrPortRequest{keyfuncstest.New("203.0.113.99:1", c.headers...), ap})
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q as from RemoteAddr", c.ap, got, err, want)
		}
	}
	got, err := plain.Key(addrPortRequest{keyfuncstest.New("192.0.2.1:5"), netip.AddrPort{}})
	if err != nil || got != "192.0.2.1" {
		t.Errorf("an invalid AddrPort: %q, %v; want RemoteAddr's 192.0.2.1", got, err)
	}
}

// TestRepeatedClientAllocatesNothing: the key of a client seen again is
// remembered, not formatted anew, for a whole address (from a peer that
// gives its address unformatted, as Fiber's does) and for an IPv6 /64.
// Sequential: it counts the process's allocations.
func TestRepeatedClientAllocatesNothing(t *testing.T) {
	for name, r := range map[string]keyfuncs.Request{
		"IPv4 address":    addrPortRequest{keyfuncstest.New("192.0.2.7:1234"), netip.MustParseAddrPort("192.0.2.7:1234")},
		"IPv6 /64 prefix": keyfuncstest.New("[2001:db8:1:2:3:4:5:6]:1234"),
	} {
		want, err := keyfuncs.RemoteIP(r)
		if err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(100, func() {
			if k, _ := keyfuncs.RemoteIP(r); k != want {
				t.Fatalf("%s: key %q, then %q", name, want, k)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations for a client seen before, want 0", name, allocs)
		}
	}
}
