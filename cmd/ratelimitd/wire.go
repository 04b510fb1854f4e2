package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
)

// The wire format of /v1/check, written and read without reflection: the
// check is the service's hot path, and encoding/json's reflection was a
// tenth of its CPU. encoding/json stays the reference. A body the fast
// reader does not fully understand (escapes, other spellings of a field
// name, duplicates, anything unusual) is read by encoding/json instead, so
// errors and corner cases keep its exact meaning; FuzzCheckRequest and
// TestAppendAnswerMatchesEncodingJSON hold the two to the same output.

// checkRequest is the body of POST /v1/check.
type checkRequest struct {
	Key      string   `json:"key"`
	Policies []string `json:"policies"`
	Cost     *int     `json:"cost"` // absent: 1; present: at least 1
}

// bodyPool holds request and response buffers.
var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bodyPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 16<<10 { // a rare large body is not kept
		*b = (*b)[:0]
		bodyPool.Put(b)
	}
}

// readBody appends the whole body to buf: a 413 problem past maxBody (the
// body is behind http.MaxBytesReader), a 400 when it cannot be read.
func readBody(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
				return buf, &apiError{status: http.StatusRequestEntityTooLarge, field: "body", detail: fmt.Sprintf("the body is larger than %d bytes (limits.max_body_bytes)", mbe.Limit)}
			}
			return buf, badRequest("body", "malformed JSON")
		}
	}
}

// readRequestBody is readBody of r.Body, which it closes once read to its
// end: the server then knows the body is spent and does not read it again
// to discard what is left (an allocation and a copy per request).
func readRequestBody(r *http.Request, buf []byte) ([]byte, error) {
	buf, err := readBody(r.Body, buf)
	if err == nil {
		_ = r.Body.Close() // at its end, so closing reads nothing and cannot fail
	}
	return buf, err
}

// checkJSON reports whether the request says its body is JSON. The exact
// spelling every client sends is answered without parsing.
func checkJSON(r *http.Request) error {
	if ct := r.Header["Content-Type"]; len(ct) == 1 && ct[0] == "application/json" {
		return nil
	}
	return checkMediaType(r)
}

// decodeCheck reads a check request: the fast reader for the usual form,
// encoding/json for everything else.
func decodeCheck(body []byte) (checkRequest, error) {
	if req, ok := parseCheck(body); ok {
		return req, nil
	}
	var req checkRequest
	err := decodeJSON(bytes.NewReader(body), &req)
	return req, err
}

// parseCheck reads the usual form of a check request: an object with the
// fields key, policies and cost at most once each, spelled so, strings of
// printable ASCII without escapes, an integer cost. ok is false for
// anything else, which encoding/json then reads, so that a body parseCheck
// accepts means what encoding/json says it means.
func parseCheck(b []byte) (req checkRequest, ok bool) {
	p := scanner{b: b}
	if !p.byte('{') {
		return req, false
	}
	var seen [3]bool
	var cost int
	if !p.byte('}') {
		for {
			name, ok := p.str()
			if !ok || !p.byte(':') {
				return req, false
			}
			switch string(name) {
			case "key":
				if seen[0] {
					return req, false
				}
				seen[0] = true
				v, ok := p.str()
				if !ok {
					return req, false
				}
				req.Key = string(v)
			case "policies":
				if seen[1] || !p.byte('[') {
					return req, false
				}
				seen[1] = true
				req.Policies = make([]string, 0, 2)
				for !p.byte(']') {
					if len(req.Policies) > 0 && !p.byte(',') {
						return req, false
					}
					v, ok := p.str()
					if !ok || len(req.Policies) == fastPolicies {
						return req, false
					}
					req.Policies = append(req.Policies, string(v))
				}
			case "cost":
				if seen[2] {
					return req, false
				}
				seen[2] = true
				if cost, ok = p.int(); !ok {
					return req, false
				}
				req.Cost = &cost
			default:
				return req, false
			}
			if p.byte(',') {
				continue
			}
			if p.byte('}') {
				break
			}
			return req, false
		}
	}
	if p.ws(); p.i != len(p.b) {
		return req, false
	}
	if req.Policies == nil {
		return req, false // encoding/json's own errors say what is missing
	}
	return req, true
}

// scanner reads the plain JSON parseCheck accepts.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte skips white space and c, if c is next.
func (s *scanner) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string of printable ASCII without escapes.
func (s *scanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// int reads an integer of at most 15 digits, as JSON writes it.
func (s *scanner) int() (int, bool) {
	s.ws()
	neg := s.i < len(s.b) && s.b[s.i] == '-'
	if neg {
		s.i++
	}
	start, n := s.i, 0
	for ; s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9'; s.i++ {
		n = n*10 + int(s.b[s.i]-'0')
	}
	digits := s.i - start
	if digits == 0 || digits > 15 || (digits > 1 && s.b[start] == '0') {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

// appendAnswer appends a result in the wire format, byte for byte what
// json.Encoder writes for the client package's CheckResponse of res, newline
// included (TestAppendAnswerMatchesEncodingJSON).
func appendAnswer(b []byte, res core.Result, inspect bool) []byte {
	b = append(b, `{"allowed":`...)
	b = strconv.AppendBool(b, res.Allowed)
	if !res.At.IsZero() { // the slot a concurrency limit gave
		b = append(b, `,"slot":`...)
		b = strconv.AppendInt(b, res.At.UnixMicro(), 10)
	}
	b = append(b, `,"decisions":[`...)
	for i, d := range res.Decisions {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"policy":`...)
		b = appendJSONString(b, fields.PolicyName(res.Policies[i]))
		b = append(b, `,"allowed":`...)
		b = strconv.AppendBool(b, d.Allowed)
		b = append(b, `,"limit":`...)
		b = strconv.AppendInt(b, int64(d.Limit), 10)
		b = append(b, `,"remaining":`...)
		b = strconv.AppendInt(b, int64(d.Remaining), 10)
		b = append(b, `,"retry_after_ms":`...)
		b = strconv.AppendInt(b, ceilMs(d.RetryAfter), 10)
		b = append(b, `,"reset_after_ms":`...)
		b = strconv.AppendInt(b, ceilMs(d.ResetAfter), 10)
		if d.Delay > 0 {
			b = append(b, `,"delay_ms":`...)
			b = strconv.AppendInt(b, ceilMs(d.Delay), 10)
		}
		if inspect {
			if a := string(res.Policies[i].Identity().Algorithm); a != "" {
				b = append(b, `,"algorithm":`...)
				b = appendJSONString(b, a)
			}
			if w := windowText(&res.Policies[i]); w != "" {
				b = append(b, `,"window":`...)
				b = appendJSONString(b, w)
			}
		}
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

// windowText is the window an inspection reports: the duration, or the
// calendar period and its zone in the policy grammar.
func windowText(p *core.Policy) string {
	if p.Calendar == "" {
		return p.Window.String()
	}
	s := p.String()
	s = s[strings.IndexByte(s, '/')+1:]
	period, _, _ := strings.Cut(s, ";")
	return period + ";tz=" + cmp.Or(p.Zone, "UTC")
}

// appendJSONString appends s as encoding/json quotes it (HTML-safe).
// Printable ASCII other than quote, backslash and <, >, & is copied; any
// other string goes through encoding/json.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// jsonContentType is the Content-Type of every JSON answer, shared: the
// server only reads it.
var jsonContentType = []string{"application/json"}

// writeAnswer writes a check's or an inspection's answer.
func writeAnswer(w http.ResponseWriter, status int, res core.Result, inspect bool) {
	buf := getBuf()
	*buf = appendAnswer(*buf, res, inspect)
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(*buf)
	putBuf(buf)
}
