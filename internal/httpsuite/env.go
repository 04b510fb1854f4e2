package httpsuite

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// start is the suite's epoch: 3 s into an aligned 10 s window, so fixed
// windows of 10 s have 7 s left and of 1 min have 57 s left.
var start = time.Date(2026, 3, 1, 12, 0, 3, 0, time.UTC)

// env is one test's world: a manual clock, a memory store, and a record of
// the middleware's events.
type env struct {
	t       *testing.T
	a       Adapter
	clock   *core.ManualClock
	limiter *core.Limiter
	mu      sync.Mutex
	events  []ratelimit.Event
}

func newEnv(t *testing.T, a Adapter) *env {
	st := must.Do(memstore.New())
	clk := core.NewManualClock(start)
	return &env{t: t, a: a, clock: clk, limiter: core.NewLimiter(st, core.WithClock(clk))}
}

// middleware builds a Middleware on the env's limiter and observer, keyed
// by the X-Key header unless opts set another key function.
func (e *env) middleware(opts ...ratelimit.Option) *ratelimit.Middleware {
	e.t.Helper()
	base := []ratelimit.Option{
		ratelimit.WithLimiter(e.limiter),
		ratelimit.WithKeyFunc(headerKey),
		ratelimit.WithObserver(e.observe),
	}
	m, err := ratelimit.New(append(base, opts...)...)
	if err != nil {
		e.t.Fatalf("ratelimit.New: %v", err)
	}
	return m
}

func (e *env) observe(_ context.Context, ev ratelimit.Event) {
	ev.Request = nil // valid only during the call
	ev.Result.Decisions = append([]core.Decision(nil), ev.Result.Decisions...)
	e.mu.Lock()
	e.events = append(e.events, ev)
	e.mu.Unlock()
}

// lastEvent returns the most recent event, failing the test if none.
func (e *env) lastEvent() ratelimit.Event {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.events) == 0 {
		e.t.Fatal("the middleware reported no event")
	}
	return e.events[len(e.events)-1]
}

// headerKey keys requests by the X-Key header, refusing with 401 when it
// is absent.
func headerKey(r keyfuncs.Request) (string, error) {
	if k := r.Header("X-Key"); k != "" {
		return k, nil
	}
	return "", &keyfuncs.MissingKeyError{Source: "header X-Key", Status: http.StatusUnauthorized}
}

// request describes one request of the suite.
type request struct {
	method, path string
	key          string      // X-Key, "" for none
	remote       string      // RemoteAddr, default 192.0.2.1:1234
	header       http.Header // extra headers, set verbatim (no validation)
}

// response is what came back.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (e *env) do(h http.Handler, r request) response {
	e.t.Helper()
	req := httptest.NewRequest(r.method, r.path, nil)
	req.RemoteAddr = "192.0.2.1:1234"
	if r.remote != "" {
		req.RemoteAddr = r.remote
	}
	if r.key != "" {
		req.Header["X-Key"] = []string{r.key}
	}
	maps.Copy(req.Header, r.header)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: body}
}

// wantStatus checks the status and, for 200, the route handler's body.
func (r response) wantStatus(t *testing.T, what string, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("%s: status %d, want %d (headers %v, body %q)", what, r.status, status, r.header, r.body)
	}
	if status == http.StatusOK && string(r.body) != OKBody {
		t.Fatalf("%s: body %q, want the handler's %q", what, r.body, OKBody)
	}
}

// member is one parsed list member of RateLimit or RateLimit-Policy.
type member struct {
	name   string
	params map[string]int64
}

// parseList parses a structured-field list field whose members are
// sf-strings with integer parameters.
func parseList(t *testing.T, h http.Header, field string) []member {
	t.Helper()
	vs := h.Values(field)
	if len(vs) == 0 {
		t.Fatalf("field %s missing (headers %v)", field, h)
	}
	l, err := httpsfv.UnmarshalList(vs)
	if err != nil {
		t.Fatalf("%s %q does not parse as a structured list: %v", field, vs, err)
	}
	out := make([]member, 0, len(l))
	for _, m := range l {
		it, ok := m.(httpsfv.Item)
		if !ok {
			t.Fatalf("%s %q: member %v is not an item", field, vs, m)
		}
		name, ok := it.Value.(string)
		if !ok {
			t.Fatalf("%s %q: member value %v is not a string", field, vs, it.Value)
		}
		mm := member{name: name, params: map[string]int64{}}
		for _, k := range it.Params.Names() {
			v, _ := it.Params.Get(k)
			n, ok := v.(int64)
			if !ok {
				t.Fatalf("%s %q: parameter %s=%v is not an integer", field, vs, k, v)
			}
			mm.params[k] = n
		}
		out = append(out, mm)
	}
	return out
}

// parseInt parses a field that is a single structured-field integer.
func parseInt(t *testing.T, h http.Header, field string) int64 {
	t.Helper()
	it, err := httpsfv.UnmarshalItem(h.Values(field))
	if err != nil {
		t.Fatalf("%s %q: %v", field, h.Values(field), err)
	}
	n, ok := it.Value.(int64)
	if !ok {
		t.Fatalf("%s %q is not an integer", field, h.Values(field))
	}
	return n
}

// wantList checks the members of field, a list such as RateLimit, against
// the expected names and parameters, in order.
func (r response) wantList(t *testing.T, field string, want ...member) {
	t.Helper()
	got := parseList(t, r.header, field)
	if len(got) != len(want) {
		t.Fatalf("%s: %d members %v, want %v", field, len(got), got, want)
	}
	for i := range want {
		if got[i].name != want[i].name || len(got[i].params) != len(want[i].params) {
			t.Fatalf("%s member %d: %v, want %v", field, i, got[i], want[i])
		}
		for k, v := range want[i].params {
			if got[i].params[k] != v {
				t.Fatalf("%s member %d: %v, want %v", field, i, got[i], want[i])
			}
		}
	}
}

// problemDoc is the part of an RFC 9457 document the suite reads.
type problemDoc struct {
	Type     string   `json:"type"`
	Title    string   `json:"title"`
	Status   int      `json:"status"`
	Detail   string   `json:"detail"`
	Violated []string `json:"violated-policies"`
}

func parseProblem(t *testing.T, r response) problemDoc {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != fields.ContentTypeProblem {
		t.Fatalf("Content-Type %q, want %q", ct, fields.ContentTypeProblem)
	}
	var p problemDoc
	dec := json.NewDecoder(strings.NewReader(string(r.body)))
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("problem document %q: %v", r.body, err)
	}
	if p.Status != r.status {
		t.Fatalf("problem status %d on a %d response", p.Status, r.status)
	}
	return p
}

// rateLimitFields are every field name any header mode writes.
var rateLimitFields = []string{"RateLimit", "RateLimit-Policy", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"}

func wantNoRateLimitFields(t *testing.T, what string, h http.Header) {
	t.Helper()
	for _, f := range rateLimitFields {
		if v := h.Values(f); len(v) > 0 {
			t.Fatalf("%s: unexpected %s: %q", what, f, v)
		}
	}
}

// failingBackend fails every call with an error full of internal detail
// that must never reach a client.
type failingBackend struct{}

var errInternal = errors.New("redis: dial tcp 10.9.8.7:6379: i/o timeout (INTERNAL-SECRET)")

func (failingBackend) Do(context.Context, []core.Item, time.Time, []core.Decision) error {
	return errInternal
}
func (failingBackend) Reset(context.Context, string, []core.Policy) error { return errInternal }

// parseDict parses a structured-field dictionary of integers.
func parseDict(t *testing.T, h http.Header, field string) map[string]int64 {
	t.Helper()
	d, err := httpsfv.UnmarshalDictionary(h.Values(field))
	if err != nil {
		t.Fatalf("%s %q does not parse as a dictionary: %v", field, h.Values(field), err)
	}
	out := map[string]int64{}
	for _, k := range d.Names() {
		m, _ := d.Get(k)
		it, ok := m.(httpsfv.Item)
		n, isInt := it.Value.(int64)
		if !ok || !isInt {
			t.Fatalf("%s %q: %s is not an integer", field, h.Values(field), k)
		}
		out[k] = n
	}
	return out
}

// checkNumericPolicies checks a draft 06/07 RateLimit-Policy: a list of
// integers (quotas) with a w parameter.
func checkNumericPolicies(t *testing.T, h http.Header) {
	t.Helper()
	l, err := httpsfv.UnmarshalList(h.Values("RateLimit-Policy"))
	if err != nil || len(l) == 0 {
		t.Fatalf("RateLimit-Policy %q: %v", h.Values("RateLimit-Policy"), err)
	}
	for _, m := range l {
		it, ok := m.(httpsfv.Item)
		if !ok {
			t.Fatalf("RateLimit-Policy member %v is not an item", m)
		}
		if _, ok := it.Value.(int64); !ok {
			t.Fatalf("RateLimit-Policy member %v is not an integer", it.Value)
		}
		if w, ok := it.Params.Get("w"); !ok || w.(int64) <= 0 {
			t.Fatalf("RateLimit-Policy member %v has no positive w", m)
		}
	}
}
