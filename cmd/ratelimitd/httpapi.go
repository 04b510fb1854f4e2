package main

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/client"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/internal/redact"
)

// storeFullDetail answers a check of a new key when the memory store holds
// limits.memory_keys states: keys it holds go on being checked.
const storeFullDetail = "the memory store holds as many states as limits.memory_keys allows: a new key is refused until states expire; keys already held are checked as usual"

// fastPolicies is the most policies decodeCheck's fast parser takes; a
// request naming more goes through the strict decoder (and is bounded by
// limits.max_policies).
const fastPolicies = 16

// apiError is a 4xx (or 5xx) answer: a problem document naming the field.
type apiError struct {
	status int
	field  string
	detail string
}

func (e *apiError) Error() string { return e.detail }

func badRequest(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, field: field, detail: fmt.Sprintf(format, args...)}
}

// handler returns the HTTP API.
func (s *service) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /v1/check", s.instrument("check", s.handleCheck))
	mux.Handle("GET /v1/inspect", s.instrument("inspect", s.handleInspect))
	mux.Handle("POST /v1/reset", s.instrument("reset", s.handleReset))
	mux.Handle("POST /v1/release", s.instrument("release", s.handleRelease))
	mux.Handle("GET /healthz", s.instrument("healthz", func(w *exchange, _ *http.Request) error {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
		return nil
	}))
	mux.Handle("GET /readyz", s.instrument("readyz", func(w *exchange, r *http.Request) error {
		if err := s.ready(r.Context()); err != nil {
			s.log.Warn("not ready", "error", redact.Error(err).Error())
			detail := "the backend does not answer within its budget"
			if why := redisConfigError(err); why != "" {
				detail = "the backend refuses the service: " + why
			}
			return &apiError{status: http.StatusServiceUnavailable, detail: detail}
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
		return nil
	}))
	mux.Handle("/v1/forward-auth/{endpoint}", s.instrument("forward_auth", s.handleForwardAuth))
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.Handle("/", s.instrument("other", func(w *exchange, r *http.Request) error {
		// The patterns above name their methods, so a known path asked
		// with another method lands here: a 405 naming the method to use,
		// not a 404 for a path that exists.
		if allow, ok := endpointMethods[r.URL.Path]; ok {
			w.Header().Set("Allow", allow)
			return &apiError{status: http.StatusMethodNotAllowed, detail: r.URL.Path + " answers " + allow + " only"}
		}
		return &apiError{status: http.StatusNotFound, detail: "no such endpoint; see /v1/check, /v1/inspect, /v1/reset, /v1/forward-auth/{name}, /healthz, /readyz, /metrics"}
	}))
	return mux
}

// endpointMethods are the methods each endpoint answers, for the Allow
// field of a 405 (HEAD comes with GET, as ServeMux serves it).
var endpointMethods = map[string]string{
	"/v1/check":   "POST",
	"/v1/inspect": "GET, HEAD",
	"/v1/reset":   "POST",
	"/v1/release": "POST",
	"/healthz":    "GET, HEAD",
	"/readyz":     "GET, HEAD",
	"/metrics":    "GET, HEAD",
}

// exchange is one request's response writer: it remembers the status
// written and holds the room for the rate-limit header fields, all in one
// allocation.
type exchange struct {
	http.ResponseWriter
	status int
	hdr    headerBlock
}

func (w *exchange) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

// headerBlock is a adapter.Response over the header of an exchange, for
// the header fields alone: their values live in the block, so that they
// cost no allocation of their own. net/http reads them until the response
// is written, after the handler returns, so a block is never reused.
type headerBlock struct {
	h    http.Header
	vals [4]string
	n    int
	buf  [96]byte
	used int
}

func (b *headerBlock) SetHeader(name, value string) {
	if b.n < len(b.vals) {
		b.vals[b.n] = value
		b.h[name] = b.vals[b.n : b.n+1 : b.n+1]
		b.n++
		return
	}
	b.h[name] = []string{value}
}

func (b *headerBlock) SetHeaderBytes(name string, value []byte) {
	if len(value) == 0 || len(value) > len(b.buf)-b.used {
		b.SetHeader(name, string(value))
		return
	}
	dst := b.buf[b.used : b.used+len(value)]
	copy(dst, value)
	b.used += len(value)
	b.SetHeader(name, unsafe.String(&dst[0], len(dst)))
}

func (*headerBlock) Write(int, string, []byte) error { return nil }

// instrument runs h with the body bounded, answers its error as a problem
// document (never with internal text for a 5xx), and counts it.
func (s *service) instrument(endpoint string, h func(*exchange, *http.Request) error) http.Handler {
	dur := s.m.httpDuration.WithLabelValues(endpoint)
	// The counters of the usual statuses, resolved once.
	var byStatus [600]prometheus.Counter
	for _, code := range []int{200, 400, 401, 403, 404, 405, 413, 415, 429, 503} {
		byStatus[code] = s.m.httpRequests.WithLabelValues(endpoint, strconv.Itoa(code))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ex := &exchange{ResponseWriter: w, status: http.StatusOK}
		ex.hdr.h = w.Header()
		body := r.Body
		r.Body = http.MaxBytesReader(ex, body, int64(s.cfg.Load().limits.body))
		err := h(ex, r)
		// The server's own body again: net/http skips its discarding read
		// after the handler only for a body it recognises, and a handler
		// that read the body to its end closed it (see readRequestBody).
		r.Body = body
		if err != nil {
			writeProblem(ex, err, s)
		}
		dur.Observe(time.Since(start).Seconds())
		if c := ex.status; c > 0 && c < len(byStatus) && byStatus[c] != nil {
			byStatus[c].Inc()
		} else {
			s.m.httpRequests.WithLabelValues(endpoint, strconv.Itoa(c)).Inc()
		}
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	writeJSONAs(w, status, "application/json", v)
}

// writeJSONAs writes v as JSON of the media type ct.
func writeJSONAs(w http.ResponseWriter, status int, ct string, v any) {
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeProblem(w http.ResponseWriter, err error, s *service) {
	var ae *apiError
	if errors.Is(err, memstore.ErrStoreFull) {
		ae = &apiError{status: http.StatusServiceUnavailable, detail: storeFullDetail}
	} else if !errors.As(err, &ae) {
		s.log.Error("request failed", "error", err.Error())
		ae = &apiError{status: http.StatusServiceUnavailable, detail: "the rate limiter could not decide; try again"}
	}
	p := client.Problem{Title: http.StatusText(ae.status), Status: ae.status, Detail: ae.detail, Field: ae.field}
	w.Header().Set("Content-Type", fields.ContentTypeProblem)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(ae.status)
	enc := json.NewEncoder(w) // a problem is JSON, not HTML: & is &
	enc.SetEscapeHTML(false)
	_ = enc.Encode(p)
}

// decodeBody reads a JSON body strictly: the right media type, no unknown
// field, no trailing data, within maxBody.
func decodeBody(r *http.Request, v any) error {
	if err := checkJSON(r); err != nil {
		return err
	}
	return decodeJSON(r.Body, v)
}

// checkMediaType refuses a body that is not application/json.
func checkMediaType(r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &apiError{status: http.StatusUnsupportedMediaType, field: "Content-Type", detail: "send the body as application/json"}
	}
	return nil
}

// decodeJSON reads one JSON object from rd into v, a pointer to a struct:
// no unknown field, no field given twice or spelled in another case (which
// encoding/json would take), no trailing data; its errors are 4xx problems
// naming the field.
func decodeJSON(rd io.Reader, v any) error {
	data, err := io.ReadAll(rd)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{status: http.StatusRequestEntityTooLarge, field: "body", detail: fmt.Sprintf("the body is larger than %d bytes (limits.max_body_bytes)", mbe.Limit)}
		}
		return badRequest("body", "the body could not be read")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return badRequest("body", "the body is empty; send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return badRequest("body", "malformed JSON")
		case errors.As(err, &te) && te.Field == "":
			return badRequest("body", "the body must be a JSON object")
		case errors.As(err, &te):
			// The field's own type: te.Type is an element's for an array.
			ft := te.Type
			if f, ok := jsonField(reflect.TypeOf(v).Elem(), te.Field); ok {
				ft = f.Type
			}
			if n, ok := wholeNumber(te.Value); ok && jsonKind(ft) == "integer" {
				// An integer, but not one an int holds: "must be an
				// integer" would be wrong.
				return badRequest(te.Field, "%s is %s, out of an integer's range", te.Field, n)
			}
			return badRequest(te.Field, "%s must be a JSON %s", te.Field, jsonKind(ft))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
			return badRequest(f, "unknown field %q", f)
		}
		return badRequest("body", "malformed JSON")
	}
	if dec.More() {
		return badRequest("body", "one JSON object only")
	}
	return strictFields(data, reflect.TypeOf(v).Elem())
}

// strictFields checks what encoding/json lets through in an object it
// decoded into a struct of type t: null or a value other than an object,
// a field given twice (it keeps the last), and a field named in another
// case ("Key" for "key", which it matches).
func strictFields(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return badRequest("body", "the body must be a JSON object")
	}
	seen := make(map[string]bool, t.NumField())
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok {
			return badRequest("body", "malformed JSON")
		}
		if _, ok := jsonField(t, name); !ok {
			return badRequest(name, "unknown field %q", name)
		}
		if seen[name] {
			return badRequest(name, "%s is given twice", name)
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return badRequest("body", "malformed JSON")
		}
	}
	return nil
}

// wholeNumber returns the text of the JSON number an UnmarshalTypeError's
// Value describes ("number 1e20") when it is a whole number.
func wholeNumber(value string) (string, bool) {
	n, ok := strings.CutPrefix(value, "number ")
	if !ok {
		return "", false
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return "", false
	}
	return n, f == math.Trunc(f)
}

// jsonField returns the field of struct type t named exactly name in JSON.
func jsonField(t reflect.Type, name string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// jsonKind names the JSON a Go type decodes from, for error messages.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Bool:
		return "boolean"
	case reflect.Slice, reflect.Array:
		return "array of " + jsonKind(t.Elem()) + "s"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "object"
}

// errShadow refuses a policy marked for a dry run where it would be
// enforced: /v1/check and forward-auth rules enforce every policy they name.
const errShadow = "shadow=true: the JSON API and forward-auth enforce every policy they name, so a dry run would deny; an Envoy domain's shadow_mode is ratelimitd's dry run"

// resolve turns the request's policy names or inline policies into
// policies.
func (rt *runtime) resolve(names []string, field string) ([]core.Policy, error) {
	if len(names) == 0 {
		return nil, badRequest(field, "at least one policy")
	}
	if len(names) > rt.limits.policies {
		return nil, badRequest(field, "at most %d policies (limits.max_policies)", rt.limits.policies)
	}
	out := make([]core.Policy, len(names))
	for i, n := range names {
		f := func() string { return field + "[" + strconv.Itoa(i) + "]" }
		if strings.IndexByte(n, 0) >= 0 {
			return nil, badRequest(f(), "a policy name has no NUL byte")
		}
		if p, ok := rt.policies[n]; ok {
			out[i] = p
		} else if strings.ContainsAny(n, "/;") {
			p, err := core.ParsePolicy(n)
			if err != nil {
				return nil, badRequest(f(), "%v", err)
			}
			if p.Shadow {
				return nil, badRequest(f(), "%s", errShadow)
			}
			if p.Name == "" {
				p.Name = n
			}
			out[i] = p
		} else {
			return nil, badRequest(f(), "no policy named %q is configured, and it is not an inline policy such as \"10/s\"", n)
		}
		for j := range i {
			if out[j].Name == out[i].Name {
				return nil, badRequest(f(), "policy %q is listed twice", out[i].Name)
			}
		}
	}
	// Only a request valid in every other way takes inline policies.
	for i, n := range names {
		if _, named := rt.policies[n]; !named && !rt.inline.take(n) {
			return nil, badRequest(field+"["+strconv.Itoa(i)+"]", "this service has taken %d distinct inline policies, as many as it takes; name the policy in the configuration, or use one already in use", maxInlinePolicies)
		}
	}
	return out, nil
}

// resolvedSet is the policies a request named, resolved, with their header
// writer (nil if they have none).
type resolvedSet struct {
	policies []core.Policy
	headers  *fields.Writer
	slots    bool // a policy is a concurrency limit
}

// policySet resolves names as resolve does, once per configuration for
// the sets requests name again and again. The names determine the set: a
// configured name means one policy in this configuration, an inline policy
// means itself, and none holds a NUL, which joins them in the cache's key.
func (rt *runtime) policySet(names []string, field string) (*resolvedSet, error) {
	var key string
	switch len(names) {
	case 0:
	case 1:
		key = names[0]
	default:
		key = strings.Join(names, "\x00")
	}
	if v, ok := rt.sets.load(key); ok {
		return v.(*resolvedSet), nil
	}
	policies, err := rt.resolve(names, field)
	if err != nil {
		return nil, err
	}
	set := &resolvedSet{policies: policies, headers: rt.headerWriter(policies)}
	for _, p := range policies {
		set.slots = set.slots || p.Algorithm == core.Concurrency
	}
	rt.sets.store(key, set)
	return set, nil
}

// checkKey refuses a key the store would refuse, or one longer than
// limits.max_key_bytes.
func (rt *runtime) checkKey(key string) error {
	if err := core.ValidateKey(key); err != nil || len(key) > rt.limits.keyBytes {
		return badRequest("key", "the key must be 1 to %d bytes (limits.max_key_bytes)", rt.limits.keyBytes)
	}
	return nil
}

// keyedSet checks key and resolves the set of policies a check or a
// release of it names.
func (rt *runtime) keyedSet(key string, names []string) (*resolvedSet, error) {
	if err := rt.checkKey(key); err != nil {
		return nil, err
	}
	return rt.policySet(names, "policies")
}

// costError turns a core cost error into a 400 naming the field.
func costError(err error) error {
	var ce *core.CostError
	if errors.As(err, &ce) {
		if errors.Is(err, core.ErrCostExceedsCapacity) {
			return badRequest("cost", "cost %d exceeds the capacity %d of policy %q: it could never succeed", ce.Cost, ce.Capacity, ce.Policy)
		}
		return badRequest("cost", "cost must be at least 1")
	}
	return err
}

func (s *service) handleCheck(w *exchange, r *http.Request) error {
	if err := checkJSON(r); err != nil {
		return err
	}
	buf := getBuf()
	defer putBuf(buf)
	var err error
	if *buf, err = readRequestBody(r, *buf); err != nil {
		return err
	}
	req, err := decodeCheck(*buf)
	if err != nil {
		return err
	}
	set, err := s.cfg.Load().keyedSet(req.Key, req.Policies)
	if err != nil {
		return err
	}
	policies := set.policies
	cost := 1
	if req.Cost != nil {
		if cost = *req.Cost; cost <= 0 {
			return badRequest("cost", "cost must be at least 1 (leave it out for 1)")
		}
	}
	for _, p := range policies {
		if err := p.CheckCost(cost); err != nil {
			return costError(err)
		}
	}
	var res core.Result
	if set.slots {
		// A concurrency limit takes one slot whatever the cost; the answer
		// names the slot's instant, which /v1/release gives back.
		items := make([]core.Item, len(policies))
		for i, p := range policies {
			items[i] = core.Item{Key: req.Key, Policy: p, Cost: cost}
			if p.Algorithm == core.Concurrency {
				items[i].Cost = 1
			}
		}
		res, err = s.store.limiter.Do(r.Context(), items, nil)
		res.Policies = policies
	} else {
		res, err = s.store.limiter.Check(r.Context(), req.Key, policies, cost, nil)
	}
	if err != nil {
		if r.Context().Err() != nil { // the client went away
			return nil
		}
		return err
	}
	s.observe(policies, res, cost)
	if set.headers != nil {
		set.headers.Write(&w.hdr, res)
	}
	status := http.StatusOK
	if !res.Allowed {
		status = http.StatusTooManyRequests
	}
	if set.slots && res.Allowed {
		res.At = res.At.Truncate(time.Microsecond)
	} else {
		res.At = time.Time{} // no slot to name
	}
	writeAnswer(w, status, res, false)
	return nil
}

// handleRelease gives back the slots a check took under the concurrency
// limits among its policies: the same key and policies, and the slot its
// answer named. The other policies are left as they are.
func (s *service) handleRelease(w *exchange, r *http.Request) error {
	if err := checkJSON(r); err != nil {
		return err
	}
	var req struct {
		Key      string   `json:"key"`
		Policies []string `json:"policies"`
		Slot     int64    `json:"slot"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	set, err := s.cfg.Load().keyedSet(req.Key, req.Policies)
	if err != nil {
		return err
	}
	if req.Slot <= 0 {
		return badRequest("slot", "the slot a check's answer named is required")
	}
	var items []core.Item
	for _, p := range set.policies {
		if p.Algorithm == core.Concurrency {
			items = append(items, core.Item{Key: req.Key, Policy: p, Cost: 1, Op: core.OpRefund, At: time.UnixMicro(req.Slot)})
		}
	}
	if len(items) == 0 {
		return badRequest("policies", "no concurrency limit among the policies: nothing to release")
	}
	if _, err := s.store.limiter.Do(r.Context(), items, nil); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"released": true})
	return nil
}

func (s *service) handleInspect(w *exchange, r *http.Request) error {
	q, err := inspectQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	key := q.Get("key")
	rt := s.cfg.Load()
	if err := rt.checkKey(key); err != nil {
		return err
	}
	policies, err := rt.resolve(q["policy"], "policy")
	if err != nil {
		return err
	}
	items := make([]core.Item, len(policies))
	for i, p := range policies {
		items[i] = core.Item{Key: key, Policy: p, Op: core.OpPeek}
	}
	res, err := s.store.limiter.Do(r.Context(), items, nil)
	if err != nil {
		return err
	}
	res.Policies, res.At = policies, time.Time{}
	writeAnswer(w, http.StatusOK, res, true)
	return nil
}

// inspectQuery parses the query of GET /v1/inspect as strictly as a body
// is read: well formed, one key, policy as often as needed, nothing else.
func inspectQuery(raw string) (url.Values, error) {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, badRequest("query", "malformed query string: separate parameters with & and escape with %%XX")
	}
	for name, vs := range q {
		switch name {
		case "policy":
		case "key":
			if len(vs) > 1 {
				return nil, badRequest("key", "key is given %d times; give it once", len(vs))
			}
		default:
			return nil, badRequest(name, "unknown parameter %q; inspect takes key and policy", name)
		}
	}
	return q, nil
}

// adminTokenMatches compares tok with every configured token in constant
// time, so that neither the match nor which token matched shows in timing.
func adminTokenMatches(tokens []string, tok string) bool {
	ok := 0
	for _, t := range tokens {
		ok |= subtle.ConstantTimeCompare([]byte(tok), []byte(t))
	}
	return ok == 1
}

func (s *service) handleReset(w *exchange, r *http.Request) error {
	rt := s.cfg.Load()
	auth := r.Header.Get("Authorization")
	tok, hasBearer := strings.CutPrefix(auth, "Bearer ")
	switch {
	case auth == "" || !hasBearer:
		w.Header().Set("WWW-Authenticate", `Bearer realm="ratelimitd"`)
		return &apiError{status: http.StatusUnauthorized, field: "Authorization", detail: "send the admin token as Authorization: Bearer <token>"}
	case len(rt.adminTokens) == 0:
		return &apiError{status: http.StatusForbidden, field: "Authorization", detail: "reset is disabled: no admin token is configured (admin_token_env or admin_token_file)"}
	case !adminTokenMatches(rt.adminTokens, tok):
		return &apiError{status: http.StatusForbidden, field: "Authorization", detail: "wrong admin token"}
	}
	var req struct {
		Key      string   `json:"key"`
		Policies []string `json:"policies"`
	}
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if err := rt.checkKey(req.Key); err != nil {
		return err
	}
	policies, err := rt.resolve(req.Policies, "policies")
	if err != nil {
		return err
	}
	if err := s.store.limiter.Reset(r.Context(), req.Key, policies...); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]bool{"reset": true})
	return nil
}

// ceilMs rounds a duration up to whole milliseconds, so that a client that
// waits that long is never early.
func ceilMs(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// observe feeds a decided check to the limiter's metrics, as the
// middleware's observer would see it.
func (s *service) observe(policies []core.Policy, res core.Result, cost int) {
	res.Policies = policies
	ev := ratelimit.Event{Outcome: ratelimit.OutcomeAllowed, Policies: policies, Cost: cost, Result: res}
	if !res.Allowed {
		ev.Outcome = ratelimit.OutcomeDenied
	}
	if len(res.Decisions) > 0 {
		ev.Source = res.Decisions[res.Binding].Source
	}
	s.metrics.Observer()(context.Background(), ev)
}
