package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	extv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/ratelimit-go/ratelimit/client"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/redistest"
	"github.com/ratelimit-go/ratelimit/internal/sink"
)

// TestMain shifts the service's clock so that it reads one second past a
// minute when the tests start. The tests check windows of a minute (the
// units of envoyproxy/ratelimit's domain files, and fixed windows of 1m)
// through the running service, which reads the wall clock: a sequence that
// straddled a minute boundary saw its counts reset (TestReload failed so
// once). The whole suite runs in a few seconds, well inside the minute, and
// the shift changes nothing else: the service reads one clock and hands its
// instant to the store, Redis included.
func TestMain(m *testing.M) {
	now := core.SystemClock().Now()
	clock = shiftedClock(now.Truncate(time.Minute).Add(time.Minute + time.Second).Sub(now))
	goleak.VerifyTestMain(m)
}

// shiftedClock is the system clock moved forward by its value.
type shiftedClock time.Duration

func (c shiftedClock) Now() time.Time { return core.SystemClock().Now().Add(time.Duration(c)) }

// instance is a running service.
type instance struct {
	t     *testing.T
	addrs listening
	logs  *sink.Log
	hup   chan os.Signal
	stop  func() error
	rls   rlsv3.RateLimitServiceClient
	http  *http.Client
}

// start runs the service with args on loopback ports chosen by the system.
func start(t *testing.T, args ...string) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan listening, 1)
	done := make(chan error, 1)
	in := &instance{t: t, logs: &sink.Log{}, hup: make(chan os.Signal, 1), http: &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}}
	noEnv := func(string) (string, bool) { return "", false }
	go func() {
		done <- run(ctx, append([]string{"-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0"}, args...), noEnv, in.logs, in.hup, ready)
	}()
	select {
	case in.addrs = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("run: %v\n%s", err, in.logs)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("the service did not start")
	}
	conn, err := grpc.NewClient(in.addrs.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	in.rls = rlsv3.NewRateLimitServiceClient(conn)
	var once sync.Once
	var stopErr error
	in.stop = func() error {
		once.Do(func() {
			conn.Close()
			in.http.CloseIdleConnections()
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(15 * time.Second):
				stopErr = errors.New("run did not return")
			}
		})
		return stopErr
	}
	t.Cleanup(func() {
		if err := in.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return in
}

func (in *instance) url(path string) string { return "http://" + in.addrs.HTTP + path }

// do sends a request and returns the status, the header and the body.
func (in *instance) do(method, path, contentType, body string, header ...string) (int, http.Header, string) {
	in.t.Helper()
	req, err := http.NewRequest(method, in.url(path), strings.NewReader(body))
	if err != nil {
		in.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := in.http.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func (in *instance) check(key string, policies ...string) (int, client.CheckResponse, http.Header) {
	in.t.Helper()
	body, _ := json.Marshal(map[string]any{"key": key, "policies": policies})
	code, h, b := in.do("POST", "/v1/check", "application/json", string(body))
	var res client.CheckResponse
	if code == 200 || code == 429 {
		if err := json.Unmarshal([]byte(b), &res); err != nil {
			in.t.Fatalf("check answer %q: %v", b, err)
		}
	}
	return code, res, h
}

// writeConfig writes files into a new directory and returns the path of
// the first.
func writeConfig(t testing.TB, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	var first string
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		if err := os.WriteFile(p, []byte(files[i+1]), 0o600); err != nil {
			t.Fatal(err)
		}
		if first == "" {
			first = p
		}
	}
	return first
}

func randomName(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "d" + hex.EncodeToString(b[:])
}

const adminToken = "s3cret-admin-token-for-tests"

// mainConfig is a configuration over backend with the domain of domain.yaml.
// Its budget is long enough that a loaded test machine never sends an exact
// count to the fallback.
func mainConfig(backend string) string {
	return fmt.Sprintf(`# the service's configuration
backend:
  url: %q
  budget: 1s
  on_failure: fallback
policies:
  api: "3/1m;algorithm=fixed_window"
  login: "5/15m;algorithm=sliding_log"
  monthly: "2/1mo;tz=Europe/Paris"
admin_token_env: RATELIMITD_TEST_TOKEN
envoy:
  response_headers: draft11
  files: ["domain.yaml"]
`, backend)
}

func domainYAML(dom string) string {
	return fmt.Sprintf(`domain: %s
descriptors:
  - key: to_number
    rate_limit:
      unit: minute
      requests_per_unit: 5
  - key: message_type
    value: marketing
    descriptors:
      - key: to_number
        rate_limit:
          unit: minute
          requests_per_unit: 1
  - key: remote_address
    value: 50.0.0.5
    rate_limit:
      unit: second
      requests_per_unit: 0
  - key: internal
    rate_limit:
      unlimited: true
  - key: trial
    shadow_mode: true
    rate_limit:
      unit: minute
      requests_per_unit: 1
  - key: path
    value: /files/*
    share_threshold: true
    rate_limit:
      unit: minute
      requests_per_unit: 2
      algorithm: gcra
`, dom)
}

func startWith(t *testing.T, backend string) (*instance, string) {
	t.Helper()
	t.Setenv("RATELIMITD_TEST_TOKEN", adminToken)
	dom := randomName(t)
	path := writeConfig(t, "ratelimitd.yaml", mainConfig(backend), "domain.yaml", domainYAML(dom))
	return start(t, "-config", path), dom
}

// backends are the stores the end-to-end tests run on.
func backends(t *testing.T) map[string]func(t *testing.T) string {
	return map[string]func(t *testing.T) string{
		"memory": func(*testing.T) string { return "memory" },
		"redis": func(t *testing.T) string {
			redistest.Client(t)
			return "redis://" + os.Getenv(redistest.AddrEnv) + "/0"
		},
		"cluster": func(t *testing.T) string {
			redistest.Cluster(t)
			return "redis-cluster://" + os.Getenv(redistest.ClusterEnv)
		},
	}
}

func TestHTTPAPI(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			in, _ := startWith(t, backend(t))
			key := randomName(t)
			for i, want := range []int{200, 200, 200, 429} {
				code, res, h := in.check(key, "api")
				if code != want || res.Allowed != (want == 200) || len(res.Decisions) != 1 || res.Decisions[0].Policy != "api" {
					t.Fatalf("check %d: %d %+v", i+1, code, res)
				}
				if h.Get("RateLimit-Policy") != `"api";q=3;w=60` || !strings.HasPrefix(h.Get("RateLimit"), `"api";r=`) {
					t.Fatalf("check %d: header fields %v", i+1, h)
				}
				if want == 429 && (h.Get("Retry-After") == "" || res.Decisions[0].RetryAfterMs <= 0) {
					t.Fatalf("denied without a Retry-After: %v %+v", h, res)
				}
			}
			// Several policies, inline ones included, all or nothing.
			code, res, _ := in.check(key+"-2", "login", "2/1h")
			if code != 200 || len(res.Decisions) != 2 || res.Decisions[1].Policy != "2/1h" || res.Decisions[1].Remaining != 1 {
				t.Fatalf("two policies: %d %+v", code, res)
			}
			// A calendar quota, inline: its window is the month in its zone.
			code, res, h := in.check(key+"-3", "5/1mo;tz=Europe/Paris")
			if code != 200 || res.Decisions[0].Remaining != 4 || !strings.Contains(h.Get("RateLimit-Policy"), ";q=5;w=") {
				t.Fatalf("calendar policy: %d %+v %v", code, res, h)
			}
			if _, _, body := in.do("GET", "/v1/inspect?key="+key+"-3&policy="+url.QueryEscape("5/1mo;tz=Europe/Paris"), "", ""); !strings.Contains(body, `"window":"1mo;tz=Europe/Paris"`) {
				t.Fatalf("calendar inspect: %s", body)
			}
			// And from the configuration file.
			for i, want := range []int{200, 200, 429} {
				if code, res, h := in.check(key+"-4", "monthly"); code != want || !strings.HasPrefix(h.Get("RateLimit-Policy"), `"monthly";q=2;w=`) {
					t.Fatalf("monthly check %d: %d %+v %v", i+1, code, res, h)
				}
			}
			// Inspect consumes nothing.
			for range 2 {
				code, _, body := in.do("GET", "/v1/inspect?key="+key+"&policy=api", "", "")
				var ins client.CheckResponse
				_ = json.Unmarshal([]byte(body), &ins)
				if code != 200 || ins.Allowed || ins.Decisions[0].Remaining != 0 || ins.Decisions[0].Algorithm != "fixed_window" || ins.Decisions[0].Window != "1m0s" {
					t.Fatalf("inspect: %d %s", code, body)
				}
			}
			// Reset needs the token.
			resetBody := `{"key":"` + key + `","policies":["api"]}`
			if code, _, _ := in.do("POST", "/v1/reset", "application/json", resetBody); code != 401 {
				t.Fatalf("reset without a token: %d", code)
			}
			if code, _, _ := in.do("POST", "/v1/reset", "application/json", resetBody, "Authorization", "Bearer wrong-token-wrong-token"); code != 403 {
				t.Fatalf("reset with a wrong token: %d", code)
			}
			if code, _, body := in.do("POST", "/v1/reset", "application/json", resetBody, "Authorization", "Bearer "+adminToken); code != 200 {
				t.Fatalf("reset: %d %s", code, body)
			}
			if code, _, _ := in.check(key, "api"); code != 200 {
				t.Fatalf("after reset: %d", code)
			}
			// The Go client.
			c, err := client.New("http://"+in.addrs.HTTP, client.WithToken(adminToken))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			cr, err := c.Check(ctx, key+"-c", []string{"api"}, 3)
			if err != nil || !cr.Allowed {
				t.Fatalf("client check: %+v %v", cr, err)
			}
			if cr, err := c.Check(ctx, key+"-c", []string{"api"}, 1); err != nil || cr.Allowed || cr.RetryAfter() <= 0 {
				t.Fatalf("client denial: %+v %v", cr, err)
			}
			if ir, err := c.Inspect(ctx, key+"-c", []string{"api"}); err != nil || ir.Decisions[0].Remaining != 0 {
				t.Fatalf("client inspect: %+v %v", ir, err)
			}
			if err := c.Reset(ctx, key+"-c", []string{"api"}); err != nil {
				t.Fatalf("client reset: %v", err)
			}
			if _, err := c.Check(ctx, key+"-c", []string{"nope"}, 1); !isStatus(err, 400) {
				t.Fatalf("client, unknown policy: %v", err)
			}
			// A concurrency limit: a check takes a slot and names it, a
			// release gives it back.
			slots := []string{"2;algorithm=concurrency", "api"}
			var held []int64
			for i, want := range []bool{true, true, false} {
				cr, err := c.Check(ctx, key+"-s", slots, 1)
				if err != nil || cr.Allowed != want || (cr.Slot != 0) != want {
					t.Fatalf("slot check %d: %+v %v", i+1, cr, err)
				}
				held = append(held, cr.Slot)
			}
			if err := c.Release(ctx, key+"-s", slots, held[0]); err != nil {
				t.Fatalf("release: %v", err)
			}
			if cr, err := c.Check(ctx, key+"-s", slots, 1); err != nil || !cr.Allowed {
				t.Fatalf("after the release: %+v %v", cr, err)
			}
			if err := c.Release(ctx, key+"-s", []string{"api"}, held[1]); !isStatus(err, 400) {
				t.Fatalf("release without a concurrency limit: %v", err)
			}
			// A slot its client gives back itself may live less than the
			// second a middleware's slot needs: the answer keeps its fields.
			if code, _, h := in.check(key+"-short", "2/100ms;algorithm=concurrency", "api"); code != 200 || h.Get("Ratelimit") == "" {
				t.Fatalf("a short-lived slot: %d %v", code, h)
			}
		})
	}
}

// TestHTTPBadInput: every malformed request is a 4xx problem naming the
// field, never a 500, never internal text, never a state change.
func TestHTTPBadInput(t *testing.T) {
	in, _ := startWith(t, "memory")
	key := randomName(t)
	big := `{"key":"` + strings.Repeat("k", 70<<10) + `","policies":["api"]}`
	for _, tc := range []struct {
		name, ct, body string
		status         int
		field          string
	}{
		{"malformed JSON", "application/json", `{"key": "k", "policies": [`, 400, "body"},
		{"empty body", "application/json", ``, 400, "body"},
		{"unknown field", "application/json", `{"key":"` + key + `","policies":["api"],"extra":1}`, 400, "extra"},
		{"unknown policy", "application/json", `{"key":"` + key + `","policies":["nope"]}`, 400, "policies[0]"},
		{"bad inline policy", "application/json", `{"key":"` + key + `","policies":["10/x"]}`, 400, "policies[0]"},
		{"a dry-run inline policy, which would be enforced", "application/json", `{"key":"` + key + `","policies":["api","10/s;shadow=true"]}`, 400, "policies[1]"},
		{"NUL in a policy name", "application/json", `{"key":"` + key + `","policies":["api","api\u0000api"]}`, 400, "policies[1]"},
		{"no policy", "application/json", `{"key":"` + key + `","policies":[]}`, 400, "policies"},
		{"zero cost", "application/json", `{"key":"` + key + `","policies":["api"],"cost":0}`, 400, "cost"},
		{"negative cost", "application/json", `{"key":"` + key + `","policies":["api"],"cost":-1}`, 400, "cost"},
		{"cost above capacity", "application/json", `{"key":"` + key + `","policies":["api"],"cost":4}`, 400, "cost"},
		{"missing key", "application/json", `{"policies":["api"]}`, 400, "key"},
		{"empty key", "application/json", `{"key":"","policies":["api"]}`, 400, "key"},
		{"wrong type", "application/json", `{"key":7,"policies":["api"]}`, 400, "key"},
		{"body over 64 KiB", "application/json", big, 413, "body"},
		{"wrong content type", "text/plain", `{"key":"` + key + `","policies":["api"]}`, 415, "Content-Type"},
		{"two objects", "application/json", `{"key":"` + key + `","policies":["api"]} {}`, 400, "body"},
		{"a field twice", "application/json", `{"key":"` + key + `","key":"other","policies":["api"]}`, 400, "key"},
		{"a field in another case", "application/json", `{"Key":"` + key + `","policies":["api"]}`, 400, "Key"},
		{"an array", "application/json", `[{"key":"` + key + `","policies":["api"]}]`, 400, "body"},
		{"null", "application/json", `null`, 400, "body"},
		{"a string", "application/json", `"` + key + `"`, 400, "body"},
		{"a policy that is a number", "application/json", `{"key":"` + key + `","policies":[1]}`, 400, "policies"},
		{"a fractional cost", "application/json", `{"key":"` + key + `","policies":["api"],"cost":1.5}`, 400, "cost"},
		{"a cost no integer holds", "application/json", `{"key":"` + key + `","policies":["api"],"cost":99999999999999999999}`, 400, "cost"},
		{"a cost in exponent form no integer holds", "application/json", `{"key":"` + key + `","policies":["api"],"cost":1e20}`, 400, "cost"},
	} {
		code, h, body := in.do("POST", "/v1/check", tc.ct, tc.body)
		var p client.Problem
		_ = json.Unmarshal([]byte(body), &p)
		if code != tc.status || h.Get("Content-Type") != "application/problem+json" || p.Field != tc.field || p.Status != code {
			t.Errorf("%s: %d %s %q, want %d naming %q", tc.name, code, h.Get("Content-Type"), body, tc.status, tc.field)
		}
		// No Go type name or package path in any answer.
		if strings.Contains(body, "main.") || strings.Contains(body, "[]") || strings.Contains(body, "json:") {
			t.Errorf("%s: internal text in %q", tc.name, body)
		}
	}
	// A cost that is not whole and one that no integer holds are told
	// apart.
	// An empty body is told from a malformed one.
	for body, want := range map[string]string{"": "the body is empty", " \n": "the body is empty", `{"key":`: "malformed JSON"} {
		_, _, answer := in.do("POST", "/v1/check", "application/json", body)
		var p client.Problem
		if err := json.Unmarshal([]byte(answer), &p); err != nil || !strings.Contains(p.Detail, want) || p.Field != "body" {
			t.Errorf("body %q: %s, want a detail saying %q", body, answer, want)
		}
	}
	for cost, want := range map[string]string{"1.5": "cost must be a JSON integer", "1e20": "cost is 1e20, out of an integer's range", "-99999999999999999999": "out of an integer's range"} {
		_, _, body := in.do("POST", "/v1/check", "application/json", `{"key":"`+key+`","policies":["api"],"cost":`+cost+`}`)
		var p client.Problem
		if err := json.Unmarshal([]byte(body), &p); err != nil || !strings.Contains(p.Detail, want) {
			t.Errorf("cost %s: %s, want a detail saying %q", cost, body, want)
		}
	}
	// The reset body is read as strictly.
	for _, body := range []string{`{"key":"` + key + `","key":"x","policies":["api"]}`, `{"KEY":"` + key + `","policies":["api"]}`, `[]`, `null`} {
		code, _, answer := in.do("POST", "/v1/reset", "application/json", body, "Authorization", "Bearer "+adminToken)
		if code != 400 || !strings.Contains(answer, `"status":400`) {
			t.Errorf("reset %s: %d %s, want 400", body, code, answer)
		}
	}
	// Nothing was consumed by any of them.
	code, _, body := in.do("GET", "/v1/inspect?key="+key+"&policy=api", "", "")
	if code != 200 || !strings.Contains(body, `"remaining":3`) {
		t.Fatalf("state after bad requests: %d %s", code, body)
	}
	for path, want := range map[string]int{"/v1/inspect?policy=api": 400, "/v1/inspect?key=k&policy=nope": 400, "/nope": 404, "/healthz": 200, "/readyz": 200} {
		if code, _, _ := in.do("GET", path, "", ""); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
	// The inspect query is read as strictly as a body.
	for _, tc := range []struct{ query, field string }{
		{"key=" + key + "&key=other&policy=api", "key"},
		{"key=" + key + "&policy=api&cost=3", "cost"},
		{"key=" + key + ";policy=api", "query"},
		{"key=%ZZ&policy=api", "query"},
	} {
		code, h, body := in.do("GET", "/v1/inspect?"+tc.query, "", "")
		var p client.Problem
		_ = json.Unmarshal([]byte(body), &p)
		if code != 400 || h.Get("Content-Type") != "application/problem+json" || p.Field != tc.field {
			t.Errorf("inspect?%s: %d %q, want 400 naming %q", tc.query, code, body, tc.field)
		}
	}
	// A known endpoint asked with another method: 405 with Allow, as a
	// problem, and nothing consumed.
	for _, tc := range []struct{ method, path, allow string }{
		{"GET", "/v1/check", "POST"},
		{"PUT", "/v1/check", "POST"},
		{"POST", "/v1/inspect", "GET, HEAD"},
		{"GET", "/v1/reset", "POST"},
		{"DELETE", "/healthz", "GET, HEAD"},
		{"POST", "/metrics", "GET, HEAD"},
	} {
		code, h, body := in.do(tc.method, tc.path, "application/json", `{"key":"`+key+`","policies":["api"]}`)
		if code != 405 || h.Get("Allow") != tc.allow || h.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":405`) {
			t.Errorf("%s %s: %d Allow %q %q, want 405 with Allow %q", tc.method, tc.path, code, h.Get("Allow"), body, tc.allow)
		}
	}
	if code, _, body := in.do("GET", "/v1/inspect?key="+key+"&policy=api", "", ""); code != 200 || !strings.Contains(body, `"remaining":3`) {
		t.Fatalf("state after requests with the wrong method: %d %s", code, body)
	}
}

func rlsRequest(dom string, hits uint32, descriptors ...[]string) *rlsv3.RateLimitRequest {
	req := &rlsv3.RateLimitRequest{Domain: dom, HitsAddend: hits}
	for _, kv := range descriptors {
		d := &extv3.RateLimitDescriptor{}
		for i := 0; i+1 < len(kv); i += 2 {
			d.Entries = append(d.Entries, &extv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
		}
		req.Descriptors = append(req.Descriptors, d)
	}
	return req
}

// TestEnvoyGRPC: ShouldRateLimit over a real gRPC client built from Envoy's
// protos, on every backend: matching as envoyproxy/ratelimit documents it,
// and every descriptor of a request decided together.
func TestEnvoyGRPC(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			in, dom := startWith(t, backend(t))
			ctx := context.Background()
			num := randomName(t)
			call := func(hits uint32, ds ...[]string) *rlsv3.RateLimitResponse {
				t.Helper()
				res, err := in.rls.ShouldRateLimit(ctx, rlsRequest(dom, hits, ds...))
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			perNumber := []string{"to_number", num}
			marketing := []string{"message_type", "marketing", "to_number", num}
			// Both descriptors admit: to_number 5/min, marketing 1/min.
			res := call(0, marketing, perNumber)
			if res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].LimitRemaining != 0 || res.Statuses[1].LimitRemaining != 4 {
				t.Fatalf("first: %v", res)
			}
			if res.Statuses[1].CurrentLimit.GetRequestsPerUnit() != 5 || res.Statuses[1].CurrentLimit.GetUnit() != rlsv3.RateLimitResponse_RateLimit_MINUTE {
				t.Fatalf("current limit: %v", res.Statuses[1])
			}
			if len(res.ResponseHeadersToAdd) == 0 {
				t.Fatal("no response_headers_to_add though response_headers is draft11")
			}
			// Marketing denies: the per-number limit must not be consumed.
			res = call(0, marketing, perNumber)
			if res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT || res.Statuses[0].Code != rlsv3.RateLimitResponse_OVER_LIMIT || res.Statuses[1].Code != rlsv3.RateLimitResponse_OK {
				t.Fatalf("second: %v", res)
			}
			if got := call(0, perNumber).Statuses[0].LimitRemaining; got != 3 {
				t.Fatalf("per-number remaining %d after a denied request, want 3: the denial consumed", got)
			}
			// hits_addend is the cost.
			if res := call(3, perNumber); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].LimitRemaining != 0 {
				t.Fatalf("hits_addend 3: %v", res)
			}
			// Blocked value, unlimited key, shadow rule, unknown descriptor.
			if res := call(0, []string{"remote_address", "50.0.0.5"}); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
				t.Fatalf("requests_per_unit 0: %v", res)
			}
			if res := call(0, []string{"internal", "x"}); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].LimitRemaining != 1<<32-1 {
				t.Fatalf("unlimited: %v", res)
			}
			trial := []string{"trial", randomName(t)}
			for range 3 {
				if res := call(0, trial); res.OverallCode != rlsv3.RateLimitResponse_OK {
					t.Fatalf("shadow_mode must never deny: %v", res)
				}
			}
			if res := call(0, []string{"nothing", "configured"}); res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].CurrentLimit != nil {
				t.Fatalf("unmatched: %v", res)
			}
			// A shared wildcard threshold: every /files/ path counts together.
			if r1, r2 := call(0, []string{"path", "/files/a"}), call(0, []string{"path", "/files/b"}); r1.OverallCode != rlsv3.RateLimitResponse_OK || r2.OverallCode != rlsv3.RateLimitResponse_OK {
				t.Fatalf("wildcard: %v %v", r1, r2)
			}
			if res := call(0, []string{"path", "/files/c"}); res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
				t.Fatalf("shared wildcard threshold: %v", res)
			}
			// Bad requests: the matching gRPC status.
			for _, tc := range []struct {
				req  *rlsv3.RateLimitRequest
				code codes.Code
			}{
				{rlsRequest("", 0, perNumber), codes.InvalidArgument},
				{rlsRequest("no-such-domain", 0, perNumber), codes.InvalidArgument},
				{rlsRequest(dom, 0), codes.InvalidArgument},
				{rlsRequest(dom, 0, []string{}), codes.InvalidArgument},
				{rlsRequest(dom, 0, []string{"", "v"}), codes.InvalidArgument},
				{rlsRequest(dom, 6, perNumber), codes.InvalidArgument},
				// A value whose escaped form makes the state key longer
				// than a key may be: the caller's error, not the service's.
				{rlsRequest(dom, 0, []string{"to_number", strings.Repeat("|", 30000)}), codes.InvalidArgument},
			} {
				if _, err := in.rls.ShouldRateLimit(ctx, tc.req); status.Code(err) != tc.code {
					req := fmt.Sprint(tc.req)
					if len(req) > 200 {
						req = req[:200] + "..."
					}
					t.Errorf("%s: %v, want %v", req, err, tc.code)
				}
			}
		})
	}
}

// TestDenyCache: with backend.deny_cache, a denial Redis gave is repeated
// by the instance itself until it expires, over HTTP and gRPC, with the
// same answer; the hits are counted; a reset through the instance drops it.
func TestDenyCache(t *testing.T) {
	for name, backend := range backends(t) {
		if name == "memory" {
			continue // refused: see TestConfigErrors
		}
		t.Run(name, func(t *testing.T) {
			t.Setenv("RATELIMITD_TEST_TOKEN", adminToken)
			dom := randomName(t)
			cfg := strings.Replace(mainConfig(backend(t)), "  on_failure: fallback\n", "  on_failure: fallback\n  deny_cache: 1000\n", 1)
			in := start(t, "-config", writeConfig(t, "ratelimitd.yaml", cfg, "domain.yaml", domainYAML(dom)))
			hits := func() int {
				for line := range strings.SplitSeq(in.metrics(), "\n") {
					if strings.HasPrefix(line, `ratelimit_deny_cache_hits_total{backend="redis"} `) {
						n, _ := strconv.Atoi(strings.Fields(line)[1])
						return n
					}
				}
				t.Fatal("no ratelimit_deny_cache_hits_total in /metrics")
				return 0
			}
			key := randomName(t)
			for range 3 {
				if code, _, _ := in.check(key, "api"); code != 200 {
					t.Fatalf("admission: %d", code)
				}
			}
			before := hits()
			var first client.CheckResponse
			for i := range 5 {
				code, res, h := in.check(key, "api")
				if code != 429 || res.Allowed || res.Decisions[0].Remaining != 0 || res.Decisions[0].RetryAfterMs <= 0 || h.Get("Retry-After") == "" {
					t.Fatalf("denial %d: %d %+v %v", i+1, code, res, h)
				}
				if i == 0 {
					first = res
				} else if d := res.Decisions[0].RetryAfterMs; d > first.Decisions[0].RetryAfterMs || d < first.Decisions[0].RetryAfterMs-5000 {
					t.Fatalf("denial %d: retry after %d ms, the first said %d", i+1, d, first.Decisions[0].RetryAfterMs)
				}
			}
			if got := hits() - before; got != 4 {
				t.Fatalf("%d deny cache hits for 4 repeated denials", got)
			}
			// A reset through this instance drops the cached denial.
			resetBody := `{"key":"` + key + `","policies":["api"]}`
			if code, _, body := in.do("POST", "/v1/reset", "application/json", resetBody, "Authorization", "Bearer "+adminToken); code != 200 {
				t.Fatalf("reset: %d %s", code, body)
			}
			if code, _, _ := in.check(key, "api"); code != 200 {
				t.Fatalf("after reset: %d", code)
			}
			// gRPC: the marketing rule (1 per minute) denies the second
			// request, and the third comes from the cache.
			num := []string{"message_type", "marketing", "to_number", randomName(t)}
			codes := []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT, rlsv3.RateLimitResponse_OVER_LIMIT}
			before = hits()
			for i, want := range codes {
				res, err := in.rls.ShouldRateLimit(context.Background(), rlsRequest(dom, 0, num))
				if err != nil || res.OverallCode != want {
					t.Fatalf("gRPC request %d: %v %v", i+1, res, err)
				}
			}
			if got := hits() - before; got != 1 {
				t.Fatalf("%d deny cache hits over gRPC, want 1", got)
			}
		})
	}
}

// TestReload: a changed file is applied without a restart and keeps every
// client's state; an invalid change keeps the running configuration, is
// logged and counted; SIGHUP reloads too.
func TestReload(t *testing.T) {
	t.Setenv("RATELIMITD_TEST_TOKEN", adminToken)
	path := writeConfig(t, "ratelimitd.yaml", "policies:\n  api: \"2/1m;algorithm=fixed_window\"\n")
	in := start(t, "-config", path)
	key := randomName(t)
	in.check(key, "api")
	in.check(key, "api")
	if code, _, _ := in.check(key, "api"); code != 429 {
		t.Fatalf("third check under 2/1m: %d", code)
	}
	if err := os.WriteFile(path, []byte("policies:\n  api: \"4/1m;algorithm=fixed_window\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the raised limit", func() bool {
		code, res, _ := in.check(key+"-probe", "api")
		return code == 200 && res.Decisions[0].Limit == 4
	})
	// The key's state survived: 2 of 4 used, so two more, then a denial.
	for i, want := range []int{200, 200, 429} {
		if code, _, _ := in.check(key, "api"); code != want {
			t.Fatalf("after the reload, check %d: %d, want %d", i+1, code, want)
		}
	}
	if err := os.WriteFile(path, []byte("policies:\n  api: \"4/1m\"\n  bogus_field: 1\nnope: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rejection", func() bool {
		return strings.Contains(in.metrics(), `ratelimitd_config_reloads_total{result="rejected"} 1`)
	})
	if !strings.Contains(in.logs.String(), "configuration rejected") || !strings.Contains(in.logs.String(), `ratelimitd.yaml:4: unknown field \"nope\" (want backend, policies,`) {
		t.Fatalf("the rejection is not logged with its line:\n%s", in.logs)
	}
	if code, res, _ := in.check(key+"-probe2", "api"); code != 200 || res.Decisions[0].Limit != 4 {
		t.Fatalf("the running configuration did not stay: %d %+v", code, res)
	}
	if err := os.WriteFile(path, []byte("policies:\n  api: \"4/1m;algorithm=fixed_window\"\n  other: \"1/s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in.hup <- os.Interrupt // any signal value: the channel is the SIGHUP one
	waitFor(t, "the new policy", func() bool { code, _, _ := in.check(key, "other"); return code == 200 })
}

// TestReloadKeepsUnitsUsed: a raised limit takes effect at once on every
// algorithm: a client that used 2 of 2/1m has 3 of 5/1m left after the
// reload, the rate algorithms included (they used to keep the time, and a
// GCRA client stayed denied for about 11 s).
func TestReloadKeepsUnitsUsed(t *testing.T) {
	for _, alg := range []string{"gcra", "token_bucket", "leaky_bucket", "fixed_window", "sliding_window", "sliding_log"} {
		t.Run(alg, func(t *testing.T) {
			path := writeConfig(t, "c.yaml", "policies:\n  api: \"2/1m;algorithm="+alg+"\"\n")
			in := start(t, "-config", path)
			key := randomName(t)
			for i, want := range []int{200, 200, 429} {
				if code, _, _ := in.check(key, "api"); code != want {
					t.Fatalf("check %d under 2/1m: %d, want %d", i+1, code, want)
				}
			}
			if err := os.WriteFile(path, []byte("policies:\n  api: \"5/1m;algorithm="+alg+"\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			in.hup <- os.Interrupt
			waitFor(t, "the raised limit", func() bool {
				code, res, _ := in.check(key+"-probe", "api")
				return code == 200 && res.Decisions[0].Limit == 5
			})
			for i, want := range []int{200, 200, 200, 429} {
				code, res, _ := in.check(key, "api")
				if code != want || (code == 200 && res.Decisions[0].Remaining != 2-i) {
					t.Fatalf("after the reload, check %d: %d %+v, want %d with %d remaining", i+1, code, res, want, 2-i)
				}
			}
		})
	}
}

// TestLeakyBucketDelay: a leaky bucket's admission names how long to hold
// the request (delay_ms), so that a client of the JSON API can send at the
// policy's rate; other answers carry no delay_ms.
func TestLeakyBucketDelay(t *testing.T) {
	in := start(t)
	key := randomName(t)
	for i, want := range []bool{false, true} {
		code, res, _ := in.check(key, "2/1m;algorithm=leaky_bucket")
		d := res.Decisions[0]
		if code != 200 || !res.Allowed || (d.DelayMs > 0) != want || d.DelayMs > 30_000 {
			t.Fatalf("check %d: %d %+v; want a delay_ms of at most 30 s (one per 30 s) on the second only", i+1, code, res)
		}
	}
	if _, res, _ := in.check(key, "2/1m"); res.Decisions[0].DelayMs != 0 {
		t.Fatalf("a GCRA admission with a delay: %+v", res)
	}
}

// TestInlinePolicyBound: a service takes a bounded number of distinct
// inline policies in its life (the stores keep every policy they see);
// past it a new one is refused with a 400 naming it, while those taken
// before, configured ones, and a reload change nothing of that. A request
// refused for another reason takes none.
func TestInlinePolicyBound(t *testing.T) {
	path := writeConfig(t, "c.yaml", "policies:\n  api: \"100/1m\"\n")
	in := start(t, "-config", path)
	key := randomName(t)
	inline := func(i int) string { return strconv.Itoa(i+1) + "/1h" }
	send := func(policies ...string) (int, client.Problem) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"key": key, "policies": policies})
		code, _, b := in.do("POST", "/v1/check", "application/json", string(body))
		var p client.Problem
		if code != 200 {
			_ = json.Unmarshal([]byte(b), &p)
		}
		return code, p
	}
	// Refused for a listed-twice policy: takes nothing.
	if code, _ := send(inline(0), "50000/1h", "50000/1h"); code != 400 {
		t.Fatalf("a policy listed twice: %d", code)
	}
	for i := 0; i < maxInlinePolicies; i += defaultLimits.policies {
		var ps []string
		for j := i; j < min(i+defaultLimits.policies, maxInlinePolicies); j++ {
			ps = append(ps, inline(j))
		}
		if code, p := send(ps...); code != 200 {
			t.Fatalf("inline policies %d to %d: %d %+v", i, i+len(ps)-1, code, p)
		}
	}
	code, p := send("api", inline(maxInlinePolicies))
	if code != 400 || p.Field != "policies[1]" || !strings.Contains(p.Detail, "inline policies") {
		t.Fatalf("one more inline policy: %d %+v", code, p)
	}
	if code, p := send("50000/1h"); code != 400 {
		t.Fatalf("the policy of the refused request was taken: %d %+v", code, p)
	}
	if code, p := send(inline(7), "api"); code != 200 {
		t.Fatalf("an inline policy taken before: %d %+v", code, p)
	}
	in.hup <- os.Interrupt
	waitFor(t, "the reload", func() bool {
		return strings.Contains(in.metrics(), `ratelimitd_config_reloads_total{result="applied"} 1`)
	})
	if code, _ := send(inline(maxInlinePolicies + 1)); code != 400 {
		t.Fatalf("a reload reset the bound: %d", code)
	}
}

func (in *instance) metrics() string {
	_, _, body := in.do("GET", "/metrics", "", "")
	return body
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConfigErrors: unknown fields and invalid values fail at start with
// the field and the line.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"unknown field", []string{"c.yaml", "backend:\n  url: memory\n  colour: blue\n"}, []string{"c.yaml:3: unknown field \"colour\" (want url, budget, on_failure, deny_cache, password_env, password_file, sentinel_password_env, sentinel_password_file, tls)"}},
		{"misspelled top-level field", []string{"c.yaml", "polices:\n  api: 1/s\n"}, []string{"c.yaml:1: unknown field \"polices\" (want "}},
		{"bad policy", []string{"c.yaml", "policies:\n  ok: \"1/s\"\n  api: \"10/x\"\n"}, []string{"c.yaml:3", "policies.api", "unknown period"}},
		{"unknown zone", []string{"c.yaml", "policies:\n  q: \"100/1mo;tz=Europe/Pariss\"\n"}, []string{"c.yaml:2", "policies.q", `tz "Europe/Pariss": unknown time zone`}},
		{"a dry-run policy, which would be enforced", []string{"c.yaml", "policies:\n  api: \"100/1m;shadow=true\"\n"}, []string{"c.yaml:2", "policies.api", "shadow=true", "shadow_mode"}},
		{"calendar on a token bucket", []string{"c.yaml", "policies:\n  q: \"100/1w;algorithm=token_bucket\"\n"}, []string{"c.yaml:2", "policies.q", "fixed_window and sliding_window only"}},
		{"bad budget", []string{"c.yaml", "backend:\n  budget: forever\n"}, []string{"c.yaml:2", "backend.budget"}},
		{"bad failure mode", []string{"c.yaml", "backend:\n  on_failure: maybe\n"}, []string{"c.yaml:2", "backend.on_failure"}},
		{"bad url", []string{"c.yaml", "backend:\n  url: http://x\n"}, []string{"c.yaml:2", "backend.url"}},
		{"negative deny cache", []string{"c.yaml", "backend:\n  url: redis://127.0.0.1:1/0\n  deny_cache: -1\n"}, []string{"c.yaml:3", "backend.deny_cache", "-1"}},
		{"huge deny cache", []string{"c.yaml", "backend:\n  url: redis://127.0.0.1:1/0\n  deny_cache: 1000000000\n"}, []string{"c.yaml:3", "backend.deny_cache", "1000000"}},
		{"deny cache on memory", []string{"c.yaml", "backend:\n  deny_cache: 100\n"}, []string{"c.yaml:2", "backend.deny_cache", "Redis"}},
		{"deny cache not a number", []string{"c.yaml", "backend:\n  url: redis://127.0.0.1:1/0\n  deny_cache: lots\n"}, []string{"c.yaml", "line 3", "lots"}},
		{"unset token", []string{"c.yaml", "admin_token_env: RATELIMITD_NO_SUCH_VAR\n"}, []string{"c.yaml:1", "admin_token_env", "RATELIMITD_NO_SUCH_VAR is not set"}},
		{"token file missing", []string{"c.yaml", "admin_token_file: nope.txt\n"}, []string{"c.yaml:1", "admin_token_file", "nope.txt"}},
		{"short token in the file", []string{"c.yaml", "admin_token_file: t.txt\n", "t.txt", "short\n"}, []string{"c.yaml:1", "admin_token_file", "token 1 of 1 holds 5 characters"}},
		{"three tokens", []string{"c.yaml", "admin_token_file: t.txt\n", "t.txt", "aaaaaaaaaaaaaaaa\nbbbbbbbbbbbbbbbb\ncccccccccccccccc\n"}, []string{"c.yaml:1", "holds 3 tokens"}},
		{"env and file", []string{"c.yaml", "admin_token_env: X\nadmin_token_file: t.txt\n"}, []string{"c.yaml:2", "not both"}},
		{"missing domain file", []string{"c.yaml", "envoy:\n  files: [\"nope/*.yaml\"]\n"}, []string{"c.yaml:2", "envoy.files"}},
		{"domain: unknown field", []string{"c.yaml", "envoy:\n  files: [\"d.yaml\"]\n", "d.yaml", "domain: x\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      colour: red\n"}, []string{"d.yaml:7: unknown field \"colour\" (want "}},
		{"domain: bad unit", []string{"c.yaml", "envoy:\n  files: [\"d.yaml\"]\n", "d.yaml", "domain: x\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n"}, []string{"d.yaml:4", "rate_limit.unit", "fortnight"}},
		{"domain twice", []string{"c.yaml", "envoy:\n  files: [\"d*.yaml\"]\n", "d1.yaml", "domain: x\n", "d2.yaml", "domain: x\n"}, []string{"domain", "twice"}},
		{"concurrency behind forward-auth", []string{"c.yaml", "policies:\n  slots: \"5;algorithm=concurrency\"\nforward_auth:\n  e:\n    trusted_proxies: [127.0.0.1]\n    rules:\n      \"/x\": {policies: [slots]}\n"}, []string{"c.yaml:7", `policy "slots" is a concurrency limit`, "never sees a request end"}},
		{"concurrency in an Envoy domain", []string{"c.yaml", "envoy:\n  files: [\"d.yaml\"]\n", "d.yaml", "domain: x\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: second\n      requests_per_unit: 1\n      algorithm: concurrency\n"}, []string{"d.yaml", "algorithm", "never says when a request ends"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, tc.files...)
			_, err := loadConfig(path, "")
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestConfigFileKinds: a configuration or domain file that is not a
// regular file, or is too large, is refused at once, naming the file (and
// for a pattern of envoy.files, its line), instead of a read that hangs or
// never ends.
func TestConfigFileKinds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, bytes.Repeat([]byte("# comment\n"), maxConfigFile/10+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "domains"), 0o700); err != nil {
		t.Fatal(err)
	}
	type kindCase struct {
		name, config string
		main         string // the file given as the configuration; "" for config
		want         []string
	}
	cases := []kindCase{
		{"a directory as the configuration", "", dir, []string{dir, "not a regular file (a directory)"}},
		{"a large configuration", "", big, []string{"big.yaml", "larger than 4 MiB"}},
		{"a large domain file", "envoy:\n  files: [\"big.yaml\"]\n", "", []string{"big.yaml", "larger than 4 MiB"}},
		{"a directory among the domain files", "envoy:\n  files: [\"d*\"]\n", "", []string{"c.yaml:2", "envoy.files", "matches the directory", "domains", `"d*/*.yaml"`}},
	}
	if st, err := os.Stat(os.DevNull); err == nil && st.Mode()&os.ModeDevice != 0 {
		cases = append(cases,
			kindCase{"a device as the configuration", "", os.DevNull, []string{os.DevNull, "not a regular file (a device)"}},
			kindCase{"a device as a domain file", fmt.Sprintf("envoy:\n  files: [%q]\n", os.DevNull), "", []string{"c.yaml:2", "envoy.files", os.DevNull + ", a device, not a domain file"}})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.main
			if path == "" {
				path = filepath.Join(dir, "c.yaml")
				if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(path)
			}
			_, err := loadConfig(path, "")
			if err == nil {
				t.Fatal("accepted")
			}
			var ce *configError
			if !errors.As(err, &ce) {
				t.Errorf("error %q is not a configuration error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

// TestNoConfig: without a configuration the service serves on the memory
// store with no policy, and says so in its first log line.
func TestNoConfig(t *testing.T) {
	in := start(t)
	first, _, _ := strings.Cut(in.logs.String(), "\n")
	if !strings.Contains(first, "no configuration") || !strings.Contains(first, "memory") {
		t.Fatalf("first log line %q", first)
	}
	if code, _, _ := in.check("k", "1/s"); code != 200 {
		t.Fatalf("an inline policy without a configuration: %d", code)
	}
}

// TestShutdown: cancelling the service's context (as SIGTERM does) stops
// both servers and run returns nil, after a request in flight finished.
func TestShutdown(t *testing.T) {
	// In flight means in a handler: net/http drops a request whose header
	// it has read but that has not reached a handler when Shutdown begins.
	entered := make(chan struct{}, 1)
	handlerHook = func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/check" {
				select {
				case entered <- struct{}{}:
				default:
				}
			}
			h.ServeHTTP(w, r)
		})
	}
	t.Cleanup(func() { handlerHook = nil })
	in := start(t)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", in.url("/v1/check"), pr)
	req.Header.Set("Content-Type", "application/json")
	inflight := make(chan int, 1)
	go func() {
		res, err := in.http.Do(req)
		if err != nil {
			inflight <- -1
			return
		}
		res.Body.Close()
		inflight <- res.StatusCode
	}()
	if _, err := io.WriteString(pw, `{"key":"k",`); err != nil { // the server is reading the body
		t.Fatal(err)
	}
	select { // the request is in its handler, reading the body: Shutdown waits for it
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the request never reached the server")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- in.stop() }()
	probe := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	waitFor(t, "shutdown to close the listener", func() bool {
		res, err := probe.Get(in.url("/healthz"))
		if err == nil {
			res.Body.Close()
		}
		return err != nil
	})
	if _, err := io.WriteString(pw, `"policies":["1/s"]}`); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if code := <-inflight; code != 200 {
		t.Fatalf("the request in flight during shutdown got %d, want 200", code)
	}
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(in.url("/healthz")); err == nil {
		t.Fatal("still serving after shutdown")
	}
}

// TestReloadDomains: the domain files of envoy.files reload as the
// configuration does: an edited file, a file saved by rename as editors do,
// a new file matching the pattern, an invalid one (kept out, logged and
// counted) and a removed one, each without a restart and without losing a
// client's state.
func TestReloadDomains(t *testing.T) {
	one, two := randomName(t), randomName(t)
	domainFile := func(dom string, perMinute int) string {
		return fmt.Sprintf("domain: %s\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: minute\n      requests_per_unit: %d\n", dom, perMinute)
	}
	path := writeConfig(t, "ratelimitd.yaml", "envoy:\n  files: [\"domains/*.yaml\"]\n")
	dir := filepath.Join(filepath.Dir(path), "domains")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one.yaml", domainFile(one, 3))
	in := start(t, "-config", path)
	ctx := context.Background()
	call := func(dom, user string) (*rlsv3.RateLimitResponse, error) {
		return in.rls.ShouldRateLimit(ctx, rlsRequest(dom, 0, []string{"user", user}))
	}
	limitOf := func(dom, user string) uint32 {
		res, err := call(dom, user)
		if err != nil {
			return 0
		}
		return res.Statuses[0].CurrentLimit.GetRequestsPerUnit()
	}
	user := randomName(t)
	for range 2 {
		if res, err := call(one, user); err != nil || res.OverallCode != rlsv3.RateLimitResponse_OK {
			t.Fatalf("before any change: %v %v", res, err)
		}
	}

	// Edited in place.
	write("one.yaml", domainFile(one, 5))
	waitFor(t, "the edited limit", func() bool { return limitOf(one, user+"-probe1") == 5 })
	// Saved by rename, as editors and ConfigMaps do.
	write(".one.yaml.tmp", domainFile(one, 4))
	if err := os.Rename(filepath.Join(dir, ".one.yaml.tmp"), filepath.Join(dir, "one.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the renamed file's limit", func() bool { return limitOf(one, user+"-probe2") == 4 })
	// The user's two requests survived both reloads: 2 of 4 used.
	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT} {
		if res, err := call(one, user); err != nil || res.OverallCode != want {
			t.Fatalf("after the reloads, request %d: %v %v, want %v", i+1, res, err, want)
		}
	}

	// A new file matching the pattern.
	if _, err := call(two, user); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("domain %s before its file: %v", two, err)
	}
	write("two.yaml", domainFile(two, 7))
	waitFor(t, "the new domain", func() bool { return limitOf(two, user) == 7 })

	// An invalid file keeps the running configuration.
	write("two.yaml", "domain: "+two+"\ndescriptors:\n  - key: user\n    rate_limit:\n      unit: fortnight\n      requests_per_unit: 1\n")
	waitFor(t, "the rejection", func() bool {
		return strings.Contains(in.metrics(), `ratelimitd_config_reloads_total{result="rejected"} 1`)
	})
	if !strings.Contains(in.logs.String(), "two.yaml") {
		t.Fatalf("the rejection does not name the file:\n%s", in.logs)
	}
	if got := limitOf(two, user+"-probe3"); got != 7 {
		t.Fatalf("after an invalid edit, domain %s has limit %d, want 7 still", two, got)
	}

	// A removed file takes its domain with it.
	if err := os.Remove(filepath.Join(dir, "two.yaml")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removed domain", func() bool {
		_, err := call(two, user)
		return status.Code(err) == codes.InvalidArgument
	})
	if got := limitOf(one, user+"-probe4"); got != 4 {
		t.Fatalf("domain %s after another file's removal: limit %d, want 4", one, got)
	}
}

// TestEnvoyHitsAddendPerDescriptor: a descriptor's own hits_addend (Envoy's
// override of the request's) is what that descriptor consumes, the
// descriptors are still decided together, a hits_addend of 0 adds nothing
// and is reported, and one that cannot be honoured is INVALID_ARGUMENT
// naming the descriptors, changing nothing.
func TestEnvoyHitsAddendPerDescriptor(t *testing.T) {
	for name, backend := range backends(t) {
		t.Run(name, func(t *testing.T) {
			in, dom := startWith(t, backend(t))
			ctx := context.Background()
			x, y := randomName(t), randomName(t)
			req := func(hits uint32, own ...uint64) *rlsv3.RateLimitRequest {
				r := rlsRequest(dom, hits, []string{"to_number", x}, []string{"to_number", y})
				for i, h := range own {
					if h != math.MaxUint64 {
						r.Descriptors[i].HitsAddend = wrapperspb.UInt64(h)
					}
				}
				return r
			}
			none := uint64(math.MaxUint64) // no hits_addend of its own
			remaining := func(res *rlsv3.RateLimitResponse) [2]uint32 {
				return [2]uint32{res.Statuses[0].LimitRemaining, res.Statuses[1].LimitRemaining}
			}
			// to_number is 5 a minute: x consumes its own 3, y the request's 1.
			res, err := in.rls.ShouldRateLimit(ctx, req(0, 3, none))
			if err != nil || res.OverallCode != rlsv3.RateLimitResponse_OK || remaining(res) != [2]uint32{2, 4} {
				t.Fatalf("first: %v %v", res, err)
			}
			// x's 3 no longer fit: the request is denied, and y consumes nothing.
			res, err = in.rls.ShouldRateLimit(ctx, req(2, 3, none))
			if err != nil || res.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT || res.Statuses[0].Code != rlsv3.RateLimitResponse_OVER_LIMIT || res.Statuses[1].Code != rlsv3.RateLimitResponse_OK {
				t.Fatalf("second: %v %v", res, err)
			}
			// Refused, naming the descriptor: more than the capacity, and
			// one limit counted with two different hits.
			for label, r := range map[string]*rlsv3.RateLimitRequest{
				"above capacity": req(1, none, 6),
				"two hits, one limit": func() *rlsv3.RateLimitRequest {
					r := rlsRequest(dom, 1, []string{"to_number", x}, []string{"to_number", x})
					r.Descriptors[1].HitsAddend = wrapperspb.UInt64(2)
					return r
				}(),
			} {
				_, err := in.rls.ShouldRateLimit(ctx, r)
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "descriptors[") {
					t.Errorf("%s: %v, want INVALID_ARGUMENT naming the descriptor", label, err)
				}
			}
			// Nothing was consumed by the denial or the refusals. A
			// descriptor whose hits_addend is 0 adds nothing and is
			// reported as it stands, OK even once its limit is spent.
			res, err = in.rls.ShouldRateLimit(ctx, req(1, 0, none))
			if err != nil || res.OverallCode != rlsv3.RateLimitResponse_OK || remaining(res) != [2]uint32{2, 3} || res.Statuses[0].CurrentLimit.GetRequestsPerUnit() != 5 {
				t.Fatalf("zero hits: %v %v", res, err)
			}
			res, err = in.rls.ShouldRateLimit(ctx, req(1, 2, none))
			if err != nil || res.OverallCode != rlsv3.RateLimitResponse_OK || remaining(res) != [2]uint32{0, 2} {
				t.Fatalf("last: %v %v", res, err)
			}
			res, err = in.rls.ShouldRateLimit(ctx, req(1, 0, none))
			if err != nil || res.OverallCode != rlsv3.RateLimitResponse_OK || res.Statuses[0].Code != rlsv3.RateLimitResponse_OK || remaining(res) != [2]uint32{0, 1} {
				t.Fatalf("zero hits on a spent limit: %v %v", res, err)
			}
		})
	}
}

// hungRedis is a TCP server on loopback that accepts connections and never
// answers, as a hung Redis does. It stops with the test.
func hungRedis(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// TestAnswerBeforeCallersDeadline: with Redis hung and a budget longer than
// a gRPC caller's deadline (Envoy's default 20 ms against the default 50 ms
// budget), the service answers from its failure mode before the caller
// gives up, and the breaker counts the timeouts until it opens; the
// caller never sees its own deadline pass.
func TestAnswerBeforeCallersDeadline(t *testing.T) {
	t.Setenv("RATELIMITD_TEST_TOKEN", adminToken)
	// The service's margin, 5 ms here, can be too short for a loaded
	// machine to deliver the answer: answer halfway to the deadline.
	margin := answerMargin
	answerMargin = func(left time.Duration) time.Duration { return left / 2 }
	t.Cleanup(func() { answerMargin = margin })
	dom := randomName(t)
	cfg := strings.Replace(mainConfig("redis://"+hungRedis(t)+"/0"), "  budget: 1s\n  on_failure: fallback\n", "  budget: 10s\n  on_failure: open\n", 1)
	in := start(t, "-config", writeConfig(t, "ratelimitd.yaml", cfg, "domain.yaml", domainYAML(dom)))
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		started := time.Now()
		res, err := in.rls.ShouldRateLimit(ctx, rlsRequest(dom, 0, []string{"to_number", "n"}))
		cancel()
		if err != nil {
			t.Fatalf("call %d, Redis hung: %v after %v, want the fail-open answer before the deadline", i, err, time.Since(started))
		}
		if res.OverallCode != rlsv3.RateLimitResponse_OK {
			t.Fatalf("call %d, Redis hung, failing open: %v", i, res)
		}
	}
	_, _, metrics := in.do("GET", "/metrics", "", "")
	if !strings.Contains(metrics, `ratelimit_backend_errors_total{kind="timeout"} 3`) {
		t.Errorf("the three timeouts are not counted against the backend:\n%s", grepLines(metrics, "backend_errors"))
	}
	if logs := in.logs.String(); !strings.Contains(logs, `"msg":"ratelimit: primary backend failed"`) {
		t.Errorf("the service logged nothing about the hung Redis:\n%s", logs)
	}
}

// grepLines returns the lines of s that contain sub.
func grepLines(s, sub string) string {
	var out []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAnswerMargin: the service stops waiting a tenth of the time left
// before a caller's deadline, at most 5 ms, and leaves a call without a
// deadline as it is.
func TestAnswerMargin(t *testing.T) {
	for left, want := range map[time.Duration]time.Duration{20 * time.Millisecond: 2 * time.Millisecond, time.Second: 5 * time.Millisecond} {
		if got := answerMargin(left); got != want {
			t.Errorf("margin with %v left: %v, want %v", left, got, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	dl, _ := ctx.Deadline()
	if limit, ok := core.WaitLimit(answerBy(ctx)); !ok || !limit.Equal(dl.Add(-5*time.Millisecond)) {
		t.Errorf("wait limit %v (%v), want 5 ms before the deadline %v", limit, ok, dl)
	}
	if _, ok := core.WaitLimit(answerBy(context.Background())); ok {
		t.Error("a wait limit for a call without a deadline")
	}
}

// TestNoConfigNamesTheBackend: started with -redis and no configuration,
// the service says it uses Redis, not the memory store.
func TestNoConfigNamesTheBackend(t *testing.T) {
	in := start(t, "-redis", "redis://"+hungRedis(t)+"/0")
	first, _, _ := strings.Cut(in.logs.String(), "\n")
	if !strings.Contains(first, "no configuration") || !strings.Contains(first, "backend redis") || strings.Contains(first, "memory") {
		t.Fatalf("first log line %q", first)
	}
}

// TestNoSecretInLogsOrErrors: a Redis URL's password appears in no log
// line, error, readiness answer or metric, whether the URL is malformed,
// the server refuses connections, or it refuses the credentials.
func TestNoSecretInLogsOrErrors(t *testing.T) {
	const secret = "s3cretPassw0rd"
	t.Run("malformed", func(t *testing.T) {
		for _, u := range []string{"redis://user:" + secret + "@[::1:6379/0", "redis://user:" + secret + "@127.0.0.1:6379/x", "rudis://user:" + secret + "@h/0"} {
			var logs sink.Log
			err := run(context.Background(), []string{"-http", "127.0.0.1:0", "-grpc", "127.0.0.1:0", "-redis", u}, func(string) (string, bool) { return "", false }, &logs, make(chan os.Signal), nil)
			if err == nil {
				t.Fatalf("%s: started", u)
			}
			if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
				t.Fatalf("the password is printed: %v\n%s", err, logs.String())
			}
		}
	})
	servers := map[string]func(t *testing.T) string{
		"refused": func(t *testing.T) string {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close() // nothing listens there now
			return addr
		},
	}
	for name, addr := range servers {
		t.Run(name, func(t *testing.T) {
			in := start(t, "-redis", "redis://user:"+secret+"@"+addr(t)+"/0")
			in.check(randomName(t), "1/s") // reaches Redis, fails, answers from the fallback
			_, _, ready := in.do("GET", "/readyz", "", "")
			_, _, metrics := in.do("GET", "/metrics", "", "")
			waitFor(t, "the failure logged", func() bool { return strings.Contains(in.logs.String(), "primary backend failed") })
			for what, text := range map[string]string{"logs": in.logs.String(), "/readyz": ready, "/metrics": metrics} {
				if strings.Contains(text, secret) {
					t.Fatalf("the password is in the %s:\n%s", what, text)
				}
			}
		})
	}
}

// TestNoSecretWhenThePasswordIsWrong: a password Redis refuses fails the
// start, and neither the error nor the logs carry it.
func TestNoSecretWhenThePasswordIsWrong(t *testing.T) {
	const secret = "s3cretPassw0rd"
	redistest.Client(t)
	var logs sink.Log
	err := run(context.Background(), []string{"-http", "127.0.0.1:0", "-grpc", "", "-redis", "redis://user:" + secret + "@" + os.Getenv(redistest.AddrEnv) + "/0"},
		func(string) (string, bool) { return "", false }, &logs, make(chan os.Signal), nil)
	if err == nil || !strings.Contains(err.Error(), "refused the user name or password") {
		t.Fatalf("start: %v", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(logs.String(), secret) {
		t.Fatalf("the password is printed: %v\n%s", err, logs.String())
	}
}

// TestAdminTokenRotation: two tokens, from a file or from the environment
// variable, are both accepted while one replaces the other, and a reload
// that drops the old one refuses it from then on.
func TestAdminTokenRotation(t *testing.T) {
	const old, next = "old-admin-token-0123456789", "new-admin-token-0123456789"
	reset := func(in *instance, tok string) int {
		code, _, _ := in.do("POST", "/v1/reset", "application/json", `{"key":"k","policies":["1/s"]}`, "Authorization", "Bearer "+tok)
		return code
	}
	t.Run("file", func(t *testing.T) {
		path := writeConfig(t, "ratelimitd.yaml", "admin_token_file: token.txt\n", "token.txt", old+"\n"+next+"\n")
		in := start(t, "-config", path)
		if a, b, c := reset(in, old), reset(in, next), reset(in, "some-other-token-0123456789"); a != 200 || b != 200 || c != 403 {
			t.Fatalf("old %d, new %d, other %d; want 200 200 403", a, b, c)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(path), "token.txt"), []byte(next+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		in.hup <- os.Interrupt // the SIGHUP channel
		waitFor(t, "the old token refused after the reload", func() bool { return reset(in, old) == 403 })
		if code := reset(in, next); code != 200 {
			t.Fatalf("the new token after the reload: %d", code)
		}
		if strings.Contains(in.logs.String(), old) || strings.Contains(in.logs.String(), next) {
			t.Fatalf("a token is in the logs:\n%s", in.logs)
		}
	})
	t.Run("env", func(t *testing.T) {
		t.Setenv("RATELIMITD_TEST_TOKENS", old+","+next)
		in := start(t, "-config", writeConfig(t, "ratelimitd.yaml", "admin_token_env: RATELIMITD_TEST_TOKENS\n"))
		if a, b := reset(in, old), reset(in, next); a != 200 || b != 200 {
			t.Fatalf("old %d, new %d", a, b)
		}
	})
}

// isStatus reports whether err is a *client.Error of the given status.
func isStatus(err error, status int) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Status == status
}
