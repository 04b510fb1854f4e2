package keyfuncs_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// FuzzClientIP feeds arbitrary RemoteAddr and forwarding headers to resolvers
// with default and custom prefixes. It checks that resolution never panics,
// that the only error is a *MissingKeyError (400) for an unusable RemoteAddr,
// that every key is a canonical masked prefix of the configured length (or
// the full address), and that headers from an untrusted peer change nothing.
func FuzzClientIP(f *testing.F) {
	f.Add("192.0.2.7:1234", "", "", "")
	f.Add("10.0.0.1:1", "6.6.6.6, 198.51.100.1, 10.0.0.2", "", "")
	f.Add("[2001:db8:ffff::1]:1", "[2001:db8:aa:bb::1]:4711", "198.51.100.2", "")
	f.Add("10.0.0.1:1", "", "", `for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711"`)
	f.Add("[::ffff:10.0.0.1]:1", "::ffff:198.51.100.1,,garbage", "x", `for="\[fe80::1%eth0\]"`)
	f.Add("fe80::1%eth0", "", "", "")
	f.Add("", "198.51.100.1", "", "")

	trustedPrefixes := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8:ffff::/48")}
	isTrusted := func(a netip.Addr) bool {
		return trustedPrefixes[0].Contains(a) || trustedPrefixes[1].Contains(a)
	}
	trusted := keyfuncs.WithTrustedProxies(trustedPrefixes...)
	headers := keyfuncs.WithProxyHeaders(keyfuncs.XForwardedFor, keyfuncs.Forwarded, keyfuncs.XRealIP)
	type config struct {
		res            *keyfuncs.IPResolver
		v4Bits, v6Bits int
	}
	var configs []config
	for _, bits := range [][2]int{{32, 64}, {24, 48}, {32, 128}} {
		res, err := keyfuncs.NewIPResolver(trusted, headers, keyfuncs.WithPrefixes(bits[0], bits[1]))
		if err != nil {
			f.Fatal(err)
		}
		configs = append(configs, config{res, bits[0], bits[1]})
	}

	f.Fuzz(func(t *testing.T, remote, xff, realIP, forwarded string) {
		r := keyfuncstest.New(remote, "X-Forwarded-For", xff, "X-Real-IP", realIP, "Forwarded", forwarded)
		// Several lines of X-Forwarded-For: split the fuzzed value at a '\n'.
		if a, b, ok := strings.Cut(xff, "\n"); ok {
			r.Headers["X-Forwarded-For"] = []string{a, b}
		}
		peerKey, peerErr := keyfuncs.RemoteIP(keyfuncstest.New(remote))
		var zero keyfuncs.IPResolver
		peerAddr, _ := zero.ClientIP(keyfuncstest.New(remote))
		for _, c := range configs {
			key, err := c.res.Key(r)
			addr, addrErr := c.res.ClientIP(r)
			if (err == nil) != (peerErr == nil) || (addrErr == nil) != (err == nil) {
				t.Fatalf("Key err %v, ClientIP err %v, RemoteAddr alone err %v: must agree", err, addrErr, peerErr)
			}
			if err != nil {
				var mk *keyfuncs.MissingKeyError
				if !errors.As(err, &mk) || mk.Status != 400 {
					t.Fatalf("error %v is not a *MissingKeyError with status 400", err)
				}
				continue
			}
			if !addr.IsValid() || addr.Zone() != "" || addr.Is4In6() {
				t.Fatalf("ClientIP = %v: must be valid, unzoned, unmapped", addr)
			}
			bits := c.v6Bits
			if addr.Is4() {
				bits = c.v4Bits
			}
			want, err := addr.Prefix(bits)
			if err != nil {
				t.Fatal(err)
			}
			wantKey := want.String()
			if bits == addr.BitLen() {
				wantKey = addr.String()
			}
			if key != wantKey {
				t.Fatalf("Key = %q, want %q (ClientIP %v masked to /%d)", key, wantKey, addr, bits)
			}
			if p, err := netip.ParsePrefix(key); err == nil {
				if p != p.Masked() || p.String() != key {
					t.Fatalf("key %q is not a canonical masked prefix", key)
				}
			} else if a, err := netip.ParseAddr(key); err != nil || a.String() != key {
				t.Fatalf("key %q is neither a canonical prefix nor an address", key)
			}
			if c.v4Bits == 32 && c.v6Bits == 64 && !isTrusted(peerAddr) && key != peerKey {
				t.Fatalf("untrusted peer %q: key %q differs from its own %q", remote, key, peerKey)
			}
		}
	})
}
