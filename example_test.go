package ratelimit_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

// printResponse is the Response an adapter would implement over its
// framework; this one prints what the middleware writes.
type printResponse struct{}

func (printResponse) SetHeader(name, value string) { fmt.Printf("  %s: %s\n", name, value) }
func (printResponse) Write(status int, contentType string, body []byte) error {
	fmt.Printf("  -> %d %s\n", status, contentType)
	return nil
}

// How an adapter drives the middleware: it hands over a keyfuncs.Request,
// a Response, and the rest of its handler chain, which the middleware
// calls when the request may proceed.
func ExampleMiddleware_Handle() {
	mw, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("2/1m;algorithm=sliding_log;name=api")),
	)
	if err != nil {
		panic(err)
	}
	req := keyfuncstest.New("203.0.113.9:4711")
	for i := 1; i <= 3; i++ {
		fmt.Println("request", i)
		mw.Handle(context.Background(), req, printResponse{}, func(ctx context.Context) int {
			fmt.Println("  -> next handler")
			return 200
		})
	}
	// Output:
	// request 1
	//   Ratelimit-Policy: "api";q=2;w=60
	//   Ratelimit: "api";r=1;t=60
	//   -> next handler
	// request 2
	//   Ratelimit-Policy: "api";q=2;w=60
	//   Ratelimit: "api";r=0;t=60
	//   -> next handler
	// request 3
	//   Ratelimit-Policy: "api";q=2;w=60
	//   Ratelimit: "api";r=0;t=60
	//   Retry-After: 60
	//   -> 429 application/problem+json
}

// Count only failed logins: every attempt is charged when it arrives, so
// that a burst cannot outrun the limit, and the ones the handler answers
// with a success are refunded.
func ExampleWithUsage() {
	mw, err := stdhttp.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("3/15m;algorithm=sliding_log;name=login-failures")),
		ratelimit.WithUsage(func(status int) bool { return status >= 400 }),
	)
	if err != nil {
		panic(err)
	}
	login := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("password") != "secret" {
			http.Error(w, "wrong password", http.StatusUnauthorized)
			return
		}
		fmt.Fprintln(w, "welcome")
	}))
	for _, password := range []string{"guess", "secret", "secret", "guess", "guess", "secret"} {
		rec := httptest.NewRecorder()
		login.ServeHTTP(rec, httptest.NewRequest("POST", "/login?password="+password, nil))
		fmt.Println(password, rec.Code, rec.Header().Get("RateLimit"))
	}
	// Output:
	// guess 401 "login-failures";r=2;t=900
	// secret 200 "login-failures";r=1;t=900
	// secret 200 "login-failures";r=1;t=900
	// guess 401 "login-failures";r=1;t=900
	// guess 401 "login-failures";r=0;t=900
	// secret 429 "login-failures";r=0;t=900
}

// A cost known once the work is done: a language model's tokens. The
// middleware charges 1 token at entry; the handler sets the tokens the
// answer used, and the middleware settles the rest when it returns, past
// the limit if need be, so that the next request waits the debt out.
func ExampleUsage_SetCost() {
	mw, err := stdhttp.New(
		ratelimit.WithKeyFunc(keyfuncs.Constant("team-7")),
		ratelimit.WithPolicy(core.MustParsePolicy("10000/1m;algorithm=token_bucket;name=tokens")),
		ratelimit.WithUsage(nil),
	)
	if err != nil {
		panic(err)
	}
	chat := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		used := 25_000 // reported by the model once the answer is complete
		if err := ratelimit.FromContext(r.Context()).SetCost(used); err != nil {
			log.Print(err) // a middleware without WithUsage: for the logs, not the client
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "an answer")
	}))
	for range 2 {
		rec := httptest.NewRecorder()
		chat.ServeHTTP(rec, httptest.NewRequest("POST", "/chat", nil))
		fmt.Println(rec.Code, "Retry-After:", rec.Header().Values("Retry-After"))
	}
	// Output:
	// 200 Retry-After: []
	// 429 Retry-After: [91]
}

// A concurrency limit: at most two requests of a client in flight. A
// request holds its slot until its handler returns; a slot its instance
// never gave back (a crash) is free after its lifetime, a minute here.
func Example_concurrency() {
	mw, err := stdhttp.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("2;algorithm=concurrency;name=inflight")),
	)
	if err != nil {
		panic(err)
	}
	entered, finish := make(chan struct{}), make(chan struct{})
	report := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-finish // a slow report
		fmt.Fprintln(w, "report")
	}))
	answered := make(chan int)
	send := func() {
		rec := httptest.NewRecorder()
		report.ServeHTTP(rec, httptest.NewRequest("GET", "/report", nil))
		answered <- rec.Code
	}
	go send()
	go send()
	<-entered
	<-entered
	go send()
	fmt.Println("third while two run:", <-answered)
	finish <- struct{}{}
	fmt.Println("first done:", <-answered)
	go send()
	<-entered
	fmt.Println("a fourth runs")
	close(finish)
	fmt.Println(<-answered, <-answered)
	// Output:
	// third while two run: 429
	// first done: 200
	// a fourth runs
	// 200 200
}
