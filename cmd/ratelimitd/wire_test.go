package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/client"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
)

// TestAppendAnswerMatchesEncodingJSON: the hand-written answer is byte for
// byte what encoding/json writes, for plain and awkward policy names, every
// algorithm, and numbers of every size.
func TestAppendAnswerMatchesEncodingJSON(t *testing.T) {
	names := []string{"", "api", "login", "10/s", `we"ird`, `back\slash`, "<b>&amp;", "é", "日本", "line\u2028sep",
		"nul\x00", "tab\t", "\x7f", "bad\xffutf8", "\x1f"}
	algos := []core.Algorithm{"", core.FixedWindow, core.SlidingLog, core.SlidingWindow, core.TokenBucket, core.GCRA, core.LeakyBucket}
	rng := rand.New(rand.NewPCG(1, 2))
	durs := []time.Duration{0, 1, time.Millisecond - 1, time.Millisecond, time.Millisecond + 1, 59 * time.Second, 1<<62 - 1}
	for i := range 2000 {
		n := 1 + rng.IntN(3)
		res := core.Result{Allowed: rng.IntN(2) == 0, Decisions: make([]core.Decision, n), Policies: make([]core.Policy, n)}
		for j := range res.Decisions {
			p := core.Policy{Name: names[rng.IntN(len(names))], Limit: rng.IntN(1 << 20), Window: time.Duration(rng.Int64N(int64(48 * time.Hour))), Algorithm: algos[rng.IntN(len(algos))]}
			if rng.IntN(4) == 0 {
				p.Window = 0
			}
			res.Policies[j] = p
			res.Decisions[j] = core.Decision{Allowed: rng.IntN(2) == 0, Limit: rng.IntN(1 << 30), Remaining: rng.IntN(1<<30) - 5,
				RetryAfter: durs[rng.IntN(len(durs))], ResetAfter: time.Duration(rng.Int64N(1 << 50)), Delay: durs[rng.IntN(len(durs))]}
		}
		for _, inspect := range []bool{false, true} {
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(answer(res, inspect)); err != nil {
				t.Fatal(err)
			}
			if got := appendAnswer(nil, res, inspect); !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("case %d inspect=%v:\n got %s\nwant %s", i, inspect, got, want.Bytes())
			}
		}
	}
	if got := appendAnswer(nil, core.Result{Allowed: true}, false); string(got) != `{"allowed":true,"decisions":[]}`+"\n" {
		t.Fatalf("no decisions: %s", got)
	}
}

// TestParseCheckTakesTheUsualForms: the bodies real clients send are read
// by the fast reader, and mean what encoding/json says.
func TestParseCheckTakesTheUsualForms(t *testing.T) {
	for _, body := range []string{
		`{"key":"user:42","policies":["api"]}`, // as package client sends them
		`{"key":"user:42","policies":["api","login","10/s"],"cost":3}`,
		`{"key":"load-7","policies":["api"]}`,
		`{"key": "user:42", "policies": ["api", "login"], "cost": 1}`,
		"{\n  \"policies\": [ \"api\" ],\n  \"key\": \"k\",\n  \"cost\": 12\n}\n",
		`{"key":"k","policies":[],"cost":-1}`,
		`{"key":"","policies":["api"],"cost":0}`,
	} {
		fast, ok := parseCheck([]byte(body))
		if !ok {
			t.Errorf("%s: not read by the fast reader", body)
			continue
		}
		var slow checkRequest
		if err := decodeJSON(bytes.NewReader([]byte(body)), &slow); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: fast %+v, encoding/json %+v", body, fast, slow)
		}
	}
	// Forms left to encoding/json, whose answers (errors included) are the
	// reference.
	for _, body := range []string{
		``, `{}`, `{"key":"k"}`, `{"Key":"k","policies":["a"]}`, `{"key":"k","key":"j","policies":["a"]}`,
		`{"key":"k\"","policies":["a"]}`, `{"key":"é","policies":["a"]}`, `{"key":"k","policies":["a"],"cost":1.0}`,
		`{"key":"k","policies":["a"],"cost":01}`, `{"key":"k","policies":["a"]} {}`, `{"key":"k","policies":["a"],}`,
		`{"key":"k","policies":["a",]}`, `{"key":"k","policies":null}`, `{"key":"k","policies":["a"],"cost":null}`,
		`{"key":"k","policies":["a"],"extra":1}`, `{"key":1,"policies":["a"]}`,
	} {
		if _, ok := parseCheck([]byte(body)); ok {
			t.Errorf("%s: read by the fast reader, which should leave it to encoding/json", body)
		}
	}
}

// FuzzCheckRequest: whatever the body, a request the fast reader accepts is
// one encoding/json accepts with the same fields.
func FuzzCheckRequest(f *testing.F) {
	for _, s := range []string{
		`{"key":"user:42","policies":["api","login"],"cost":2}`, `{"key":"k","policies":[]}`, `{"policies":["a"],"key":"k"}`,
		` { "key" : "k" , "policies" : [ "a" , "b" ] , "cost" : -0 } `, `{"key":"k","policies":["a"],"cost":999999999999999}`,
		`{"key":"k","policies":["a"],"cost":1e3}`, `{"key":"k\u0041","policies":["a"]}`, `[]`, `{"key":"k","policies":["a"]}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := parseCheck(body)
		if !ok {
			return
		}
		var slow checkRequest
		if err := decodeJSON(bytes.NewReader(body), &slow); err != nil {
			t.Fatalf("%q: the fast reader took it as %+v, encoding/json refuses it: %v", body, fast, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q: fast %+v, encoding/json %+v", body, fast, slow)
		}
	})
}

// answer renders a result in the wire format through client's types and
// encoding/json: the reference appendAnswer is held to.
func answer(res core.Result, inspect bool) client.CheckResponse {
	out := client.CheckResponse{Allowed: res.Allowed, Decisions: make([]client.Decision, len(res.Decisions))}
	for i, d := range res.Decisions {
		out.Decisions[i] = client.Decision{
			Policy: fields.PolicyName(res.Policies[i]), Allowed: d.Allowed, Limit: d.Limit, Remaining: d.Remaining,
			RetryAfterMs: ceilMs(d.RetryAfter), ResetAfterMs: ceilMs(d.ResetAfter), DelayMs: ceilMs(d.Delay),
		}
		if inspect {
			out.Decisions[i].Algorithm = string(res.Policies[i].Identity().Algorithm)
			out.Decisions[i].Window = res.Policies[i].Window.String()
		}
	}
	return out
}
