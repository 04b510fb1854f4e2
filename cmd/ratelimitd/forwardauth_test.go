package main

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/client"
	"github.com/ratelimit-go/ratelimit/core"
)

// forwardConfig has a Caddy-style endpoint (denials as 429) and an
// nginx-style one (denials as 403), both trusting the loopback proxy.
const forwardConfig = `
policies:
  login: "3/1m"
  api: "2/1m"
forward_auth:
  edge:
    trusted_proxies: ["127.0.0.1", "::1"]
    rules:
      "POST /login": {policies: [login]}
      "/api/": {key: ["header:X-Api-Key", client_ip], policies: [api]}
  nginx:
    deny_status: 403
    trusted_proxies: ["127.0.0.1/32"]
    client_ip_headers: [X-Real-IP]
    rules:
      "POST /login": {policies: [login]}
`

// TestForwardAuth: a forwarded request is matched by method, host and
// path to its rule, keyed by its client behind the trusted proxy or by a
// header, and answered 200 with the fields until its limit, then with the
// endpoint's denial status, Retry-After, the fields and a problem.
func TestForwardAuth(t *testing.T) {
	in := start(t, "-config", writeConfig(t, "c.yaml", forwardConfig))
	ask := func(endpoint, method string, hdr ...string) (int, map[string]string, string) {
		t.Helper()
		code, h, body := in.do(method, "/v1/forward-auth/"+endpoint, "", "", hdr...)
		got := map[string]string{}
		for _, f := range []string{"Ratelimit", "Ratelimit-Policy", "Retry-After", "Content-Type"} {
			got[f] = h.Get(f)
		}
		return code, got, body
	}
	caddy := func(method, uri, client string, extra ...string) []string {
		return append([]string{"X-Forwarded-Method", method, "X-Forwarded-Uri", uri, "X-Forwarded-Host", "example.com", "X-Forwarded-For", client}, extra...)
	}

	for i := range 3 {
		code, h, _ := ask("edge", "GET", caddy("POST", "/login?next=/", "203.0.113.7")...)
		if code != 200 || h["Ratelimit-Policy"] != `"login";q=3;w=60` || !strings.Contains(h["Ratelimit"], `r=`+string(rune('2'-i))) {
			t.Fatalf("login %d: %d %v", i+1, code, h)
		}
	}
	code, h, body := ask("edge", "GET", caddy("POST", "/login", "203.0.113.7")...)
	if code != 429 || h["Retry-After"] == "" || !strings.Contains(h["Ratelimit"], "r=0") || h["Content-Type"] != "application/problem+json" {
		t.Fatalf("login 4: %d %v %s", code, h, body)
	}
	var p client.Problem
	if err := json.Unmarshal([]byte(body), &p); err != nil || p.Status != 429 {
		t.Fatalf("denial body %s: %v", body, err)
	}
	// Another client behind the same proxy has its own limit; the cleaned
	// path counts as the path it names.
	if code, _, _ := ask("edge", "GET", caddy("POST", "/api/../login", "203.0.113.8")...); code != 200 {
		t.Fatalf("another client: %d", code)
	}
	// No rule for GET /login: admitted, no fields.
	if code, h, _ := ask("edge", "GET", caddy("GET", "/login", "203.0.113.7")...); code != 200 || h["Ratelimit"] != "" {
		t.Fatalf("GET /login: %d %v", code, h)
	}
	// A header key, falling back to the client address.
	for i := range 2 {
		if code, _, _ := ask("edge", "GET", caddy("GET", "/api/items", "203.0.113.9", "X-Api-Key", "k1")...); code != 200 {
			t.Fatalf("api %d: %d", i, code)
		}
	}
	if code, _, _ := ask("edge", "GET", caddy("GET", "/api/items", "203.0.113.9", "X-Api-Key", "k1")...); code != 429 {
		t.Fatalf("api 3: %d", code)
	}
	if code, _, _ := ask("edge", "GET", caddy("GET", "/api/items", "203.0.113.9", "X-Api-Key", "k2")...); code != 200 {
		t.Fatalf("another API key: %d", code)
	}
	if code, _, _ := ask("edge", "GET", caddy("GET", "/api/items", "203.0.113.9")...); code != 200 {
		t.Fatalf("no API key, falling back to the address: %d", code)
	}

	// nginx: the original method, X-Original-URI, X-Real-IP; 403 on a
	// denial. X-Forwarded-For is not read at this endpoint.
	nginx := func(client string) []string {
		return []string{"X-Original-URI", "/login", "X-Real-IP", client, "X-Forwarded-For", "198.51.100.1"}
	}
	for range 3 {
		if code, _, _ := ask("nginx", "POST", nginx("192.0.2.1")...); code != 200 {
			t.Fatalf("nginx: %d", code)
		}
	}
	if code, h, _ := ask("nginx", "POST", nginx("192.0.2.1")...); code != 403 || h["Retry-After"] == "" {
		t.Fatalf("nginx denial: %d %v", code, h)
	}
	if code, _, _ := ask("nginx", "POST", nginx("192.0.2.2")...); code != 200 {
		t.Fatalf("nginx, another client: %d", code)
	}

	// Bad requests and endpoints.
	for _, tc := range []struct {
		endpoint string
		hdr      []string
		code     int
		field    string
	}{
		{"edge", []string{"X-Forwarded-Method", "POST"}, 400, "X-Forwarded-Uri"},
		{"edge", []string{"X-Forwarded-Uri", "login"}, 400, "X-Forwarded-Uri"},
		{"edge", []string{"X-Forwarded-Uri", "/login", "X-Forwarded-Method", "PO ST"}, 400, "X-Forwarded-Method"},
		{"nope", []string{"X-Forwarded-Uri", "/login"}, 404, ""},
	} {
		code, h, body := ask(tc.endpoint, "GET", tc.hdr...)
		if code != tc.code || h["Content-Type"] != "application/problem+json" || (tc.field != "" && !strings.Contains(body, `"field":"`+tc.field)) {
			t.Errorf("%v: %d %v %s", tc.hdr, code, h, body)
		}
	}
	if m := in.metrics(); !strings.Contains(m, `ratelimitd_http_requests_total{code="429",endpoint="forward_auth"}`) {
		t.Errorf("no forward_auth metric:\n%s", grepLines(m, "forward_auth"))
	}
}

// TestForwardAuthConfigErrors: every mistake in a forward_auth section is
// refused at start with the file, line and field.
func TestForwardAuthConfigErrors(t *testing.T) {
	head := "policies:\n  login: \"3/1m\"\nforward_auth:\n"
	for _, tc := range []struct{ name, body, want string }{
		{"unknown policy", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {policies: [nope]}\n", `c.yaml:7: forward_auth.e.rules./x.policies: no policy named "nope"`},
		{"bad pattern", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"GET\": {policies: [login]}\n", "forward_auth.e.rules.GET: "},
		{"conflicting patterns", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"GET /{a}/x\": {policies: [login]}\n      \"GET /x/{b}\": {policies: [login]}\n", "conflicts"},
		{"client_ip untrusted", "  e:\n    rules:\n      \"/x\": {policies: [login]}\n", "client_ip needs trusted_proxies"},
		{"bad deny status", "  e:\n    deny_status: 500\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {policies: [login]}\n", "c.yaml:5: forward_auth.e.deny_status: 500: want 429, 403"},
		{"bad key source", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {key: [cookie], policies: [login]}\n", `"cookie": want client_ip or header:<name>`},
		{"bad header name", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {key: [\"header:X Y\"], policies: [login]}\n", "not a header name"},
		{"client_ip not last", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {key: [client_ip, \"header:A\"], policies: [login]}\n", "put it last"},
		{"bad proxy", "  e:\n    trusted_proxies: [localhost]\n    rules:\n      \"/x\": {policies: [login]}\n", `"localhost": want an address or a prefix`},
		{"every address trusted", "  e:\n    trusted_proxies:\n      - 127.0.0.1\n      - ::/0\n    rules:\n      \"/x\": {policies: [login]}\n", "c.yaml:7: forward_auth.e.trusted_proxies: keyfuncs: invalid option: trusted proxy prefix ::/0 trusts every address"},
		{"bad proxy header", "  e:\n    trusted_proxies: [127.0.0.1]\n    client_ip_headers: [X-Client]\n    rules:\n      \"/x\": {policies: [login]}\n", `"X-Client": want X-Forwarded-For`},
		{"cost above capacity", "  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {policies: [login], cost: 4}\n", "forward_auth.e.rules./x.cost"},
		{"no rules", "  e:\n    trusted_proxies: [127.0.0.1]\n", "no rule"},
		{"bad endpoint name", "  \"a/b\":\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {policies: [login]}\n", "an endpoint name is"},
		{"unknown field", "  e:\n    trusted_proxy: [127.0.0.1]\n", `unknown field "trusted_proxy" (want deny_status, trusted_proxies, client_ip_headers, rules)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeConfig(t, "c.yaml", head+tc.body), "")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestForwardAuthHoldsALeakyBucket: a leaky bucket's admission is answered
// once its delay has passed on the service's clock (a manual one here), so
// that the proxy forwards requests at the policy's rate (20 a second: the
// second 50 ms after the first); a delay past max_delay (1 s unless the
// policy says) is a denial with its Retry-After, not a hold.
func TestForwardAuthHoldsALeakyBucket(t *testing.T) {
	shifted := clock
	manual := core.NewManualClock(shifted.Now())
	clock = manual // the service's limiter and its hold read it; no test here runs in parallel
	t.Cleanup(func() { clock = shifted })
	in := start(t, "-config", writeConfig(t, "c.yaml", `
policies:
  paced: "20/1s;algorithm=leaky_bucket"
  slow: "2/1m;algorithm=leaky_bucket"
forward_auth:
  e:
    trusted_proxies: ["127.0.0.1", "::1"]
    rules:
      "/paced": {key: ["header:X-Client"], policies: [paced]}
      "/slow": {key: ["header:X-Client"], policies: [slow]}
`))
	client := randomName(t)
	ask := func(uri string) (int, http.Header) {
		code, h, _ := in.do("GET", "/v1/forward-auth/e", "", "", "X-Forwarded-Uri", uri, "X-Forwarded-Method", "GET", "X-Client", client)
		return code, h
	}
	if code, _ := ask("/paced"); code != 200 {
		t.Fatalf("first paced request: %d", code)
	}
	done := make(chan int, 1)
	go func() { code, _ := ask("/paced"); done <- code }()
	asked := manual.Now()
	waitFor(t, "the held answer", func() bool { manual.Advance(5 * time.Millisecond); return len(done) > 0 })
	if code, held := <-done, manual.Now().Sub(asked); code != 200 || held < 50*time.Millisecond {
		t.Fatalf("second paced request: %d once the clock had moved %v; want a 200 held to 50 ms after the first", code, held)
	}
	if code, _ := ask("/slow"); code != 200 {
		t.Fatalf("first slow request: %d", code)
	}
	if code, h := ask("/slow"); code != 429 || h.Get("Retry-After") == "" {
		t.Fatalf("a request 30 s behind in the queue: %d %v; want a denial, not a hold", code, h)
	}
	_, err := loadConfig(writeConfig(t, "c.yaml", "policies:\n  paced: \"2/1m;algorithm=leaky_bucket;max_delay=10s\"\nforward_auth:\n  e:\n    rules:\n      \"/x\": {key: [\"header:A\"], policies: [paced]}\n"), "")
	if want := `c.yaml:6: forward_auth.e.rules./x.policies: policy "paced": max_delay 10s: forward-auth holds the proxy's subrequest for the delay, at most 5s`; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("a hold past 5 s: %v, want %q", err, want)
	}
}

// TestForwardAuthDocs: the nginx and Caddy configurations the proxy tests
// run are the ones docs/forward-auth.md shows.
func TestForwardAuthDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/forward-auth.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]string{"nginx": nginxServer, "caddy": caddySite} {
		if !strings.Contains(string(doc), "```"+name+"\n"+block+"```\n") {
			t.Errorf("docs/forward-auth.md does not show the %s configuration the tests run:\n%s", name, block)
		}
	}
}

// TestConcurrencyInTheConfig: a configured concurrency limit is a policy
// like any other for /v1/check, and only forward-auth refuses it.
func TestConcurrencyInTheConfig(t *testing.T) {
	rt, err := loadConfig(writeConfig(t, "c.yaml", "policies:\n  inflight: \"5;algorithm=concurrency\"\n  reports: \"20/30s;algorithm=concurrency\"\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if p := rt.policies["inflight"]; p.Algorithm != core.Concurrency || p.Limit != 5 || p.Window != time.Minute {
		t.Fatalf("inflight: %+v", p)
	}
	if p := rt.policies["reports"]; p.Algorithm != core.Concurrency || p.Window != 30*time.Second {
		t.Fatalf("reports: %+v", p)
	}
}
