package keyfuncs_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// Behind a load balancer in 10.0.0.0/8, the client is the rightmost address
// of X-Forwarded-For that is not a trusted hop. The same header from anyone
// else is ignored.
func ExampleIPResolver() {
	res, err := keyfuncs.NewIPResolver(
		keyfuncs.WithTrustedProxies(netip.MustParsePrefix("10.0.0.0/8")),
	)
	if err != nil {
		panic(err)
	}
	viaProxy := keyfuncstest.New("10.0.0.1:4242", "X-Forwarded-For", "203.0.113.66, 198.51.100.7, 10.0.0.2")
	direct := keyfuncstest.New("192.0.2.9:5555", "X-Forwarded-For", "198.51.100.7")

	for _, r := range []*keyfuncstest.Request{viaProxy, direct} {
		key, _ := res.Key(r)
		ip, _ := res.ClientIP(r)
		fmt.Println(key, ip)
	}
	// Output:
	// 198.51.100.7 198.51.100.7
	// 192.0.2.9 192.0.2.9
}

// IPv6 clients are grouped by /64: one subscriber cannot dodge the limit by
// rotating addresses inside its prefix.
func ExampleRemoteIP() {
	for _, remote := range []string{"[2001:db8:1:2::10]:443", "[2001:db8:1:2:aaaa::1]:443", "[::ffff:192.0.2.7]:80", "[fe80::1%eth0]:80"} {
		key, _ := keyfuncs.RemoteIP(keyfuncstest.New(remote))
		fmt.Println(key)
	}
	_, err := keyfuncs.RemoteIP(keyfuncstest.New("@"))
	var mk *keyfuncs.MissingKeyError
	fmt.Println(errors.As(err, &mk), mk.Status)
	// Output:
	// 2001:db8:1:2::/64
	// 2001:db8:1:2::/64
	// 192.0.2.7
	// fe80::/64
	// true 400
}

// Key by API key, and by client IP for requests that carry none. Values unfit
// to be a key are hashed.
func ExampleHeader() {
	byKey := keyfuncs.Header("X-API-Key", keyfuncs.FallbackIfMissing(keyfuncs.RemoteIP))
	for _, r := range []*keyfuncstest.Request{
		keyfuncstest.New("192.0.2.9:1", "X-API-Key", "team-42"),
		keyfuncstest.New("192.0.2.9:1"),
		keyfuncstest.New("192.0.2.9:1", "X-API-Key", "bad\tvalue"),
	} {
		key, _ := byKey(r)
		fmt.Println(key)
	}

	required := keyfuncs.Header("X-API-Key", keyfuncs.RefuseIfMissing(401))
	_, err := required(keyfuncstest.New("192.0.2.9:1"))
	fmt.Println(err)
	// Output:
	// #3R1Zns8okNXvuyJLKiAn_KIh1orJr9jBT44D3pIWhZ0
	// ~192.0.2.9
	// #kGx560_d_99rh2j5VJda-CFQGGl5ZiHOmK-97ZlV6Y0
	// keyfuncs: missing rate-limit key: header X-API-Key
}

// A per-client, per-route limit: one key per client and route pattern, the
// same for /users/1 and /users/2.
func ExampleCompose() {
	perRoute := keyfuncs.Compose(keyfuncs.Method, keyfuncs.Route, keyfuncs.RemoteIP)
	for _, path := range []string{"/users/1", "/users/2"} {
		r := &keyfuncstest.Request{Verb: "GET", URLPath: path, Pattern: "/users/{id}", Remote: "192.0.2.9:1"}
		key, _ := perRoute(r)
		fmt.Println(key)
	}
	unmatched := &keyfuncstest.Request{Verb: "GET", URLPath: "/wp-login.php", Remote: "192.0.2.9:1"}
	key, _ := perRoute(unmatched)
	fmt.Println(key)
	// Output:
	// GET|/users/{id}|192.0.2.9
	// GET|/users/{id}|192.0.2.9
	// GET|(unmatched)|192.0.2.9
}

// A global limit shared by every client.
func ExampleConstant() {
	global := keyfuncs.Constant("global")
	key, _ := global(keyfuncstest.New("192.0.2.9:1"))
	fmt.Println(key)
	// Output: global
}

// userKey is the context key under which an authentication middleware
// stores the caller's user ID.
type userKey struct{}

// Keys from the authenticated caller: a value that authentication middleware
// put in the request's context (or, on Gin, Echo and Fiber, stored with
// Context.Set or Ctx.Locals). A request that arrives without one is refused
// with 401.
func ExampleContextValue() {
	byUser := keyfuncs.ContextValue(userKey{})
	r := keyfuncstest.New("192.0.2.9:1")
	r.Ctx = context.WithValue(context.Background(), userKey{}, "user-42")
	key, _ := byUser(r)
	fmt.Println(key)

	_, err := byUser(keyfuncstest.New("192.0.2.9:1"))
	var missing *keyfuncs.MissingKeyError
	fmt.Println(errors.As(err, &missing), missing.Status)
	// Output:
	// user-42
	// true 401
}
