package keyfuncs_test

import (
	"fmt"
	"net/netip"
	"strconv"
	"testing"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// sink keeps benchmark results alive so the compiler cannot drop the work.
var sink string

func benchKey(b *testing.B, kf keyfuncs.KeyFunc, r keyfuncs.Request) {
	b.Helper()
	if _, err := kf(r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var k string
		for pb.Next() {
			k, _ = kf(r)
		}
		sink = k
	})
}

func BenchmarkRemoteIPv4(b *testing.B) {
	benchKey(b, keyfuncs.RemoteIP, keyfuncstest.New("192.0.2.7:51234"))
}

func BenchmarkRemoteIPv6(b *testing.B) {
	benchKey(b, keyfuncs.RemoteIP, keyfuncstest.New("[2001:db8:1:2:3:4:5:6]:51234"))
}

// BenchmarkRemoteIPv6Clients: the /64 keys of n IPv6 clients in turn, on
// one goroutine: 1,000 clients come back often, 1,048,576 hardly ever.
func BenchmarkRemoteIPv6Clients(b *testing.B) {
	for _, n := range []int{1_000, 1 << 20} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			reqs := make([]keyfuncs.Request, n)
			for i := range reqs {
				reqs[i] = keyfuncstest.New(fmt.Sprintf("[2001:db8:%x:%x::1]:5555", i>>16, i&0xffff))
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				sink, _ = keyfuncs.RemoteIP(reqs[i])
				if i++; i == n {
					i = 0
				}
			}
		})
	}
}

func BenchmarkClientIPAddr(b *testing.B) {
	var res keyfuncs.IPResolver
	r := keyfuncstest.New("192.0.2.7:51234")
	b.ReportAllocs()
	var a netip.Addr
	for b.Loop() {
		a, _ = res.ClientIP(r)
	}
	sink = a.String()
}

func BenchmarkXForwardedFor(b *testing.B) {
	res, err := keyfuncs.NewIPResolver(keyfuncs.WithTrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
	if err != nil {
		b.Fatal(err)
	}
	benchKey(b, res.Key, keyfuncstest.New("10.0.0.1:1", "X-Forwarded-For", "6.6.6.6, 198.51.100.1, 10.0.0.3, 10.0.0.2"))
}

func BenchmarkHeaderVerbatim(b *testing.B) {
	benchKey(b, keyfuncs.Header("X-API-Key"), keyfuncstest.New("192.0.2.7:1", "X-API-Key", "key-0123456789abcdef"))
}

func BenchmarkHeaderHashed(b *testing.B) {
	benchKey(b, keyfuncs.Header("X-API-Key"), keyfuncstest.New("192.0.2.7:1", "X-API-Key", "key with spaces 0123456789abcdef"))
}

func BenchmarkComposeRouteIP(b *testing.B) {
	r := &keyfuncstest.Request{Verb: "GET", Pattern: "/users/{id}", Remote: "192.0.2.7:51234"}
	benchKey(b, keyfuncs.Compose(keyfuncs.Method, keyfuncs.Route, keyfuncs.RemoteIP), r)
}
