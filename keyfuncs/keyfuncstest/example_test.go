package keyfuncstest_test

import (
	"fmt"

	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// A fake request with an X-Forwarded-For header on two lines, as some
// proxies send it; both lines are visible through HeaderValues.
func ExampleNew() {
	r := keyfuncstest.New("10.0.0.1:4242",
		"X-Forwarded-For", "203.0.113.66",
		"x-forwarded-for", "198.51.100.7")
	r.Pattern = "/users/{id}"

	var req keyfuncs.Request = r
	fmt.Println(req.Method(), req.Route(), req.RemoteAddr())
	fmt.Println(req.Header("X-Forwarded-For"))
	fmt.Println(r.HeaderValues("X-FORWARDED-FOR"))
	// Output:
	// GET /users/{id} 10.0.0.1:4242
	// 203.0.113.66
	// [203.0.113.66 198.51.100.7]
}
