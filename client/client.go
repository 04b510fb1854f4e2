// Package client calls the JSON API of ratelimitd, the rate limiter run as a
// service: Check, Inspect and Reset, each bounded by its context and by the
// client's timeout. It depends on the standard library alone.
//
//	c, err := client.New("http://127.0.0.1:8080")
//	res, err := c.Check(ctx, "user:42", []string{"api"}, 1)
//	if err == nil && !res.Allowed { /* wait res.RetryAfter() */ }
//
// The response types are the service's wire format; the service uses them
// too.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// request is the body of POST /v1/check, /v1/reset and /v1/release.
type request struct {
	Key      string   `json:"key"`
	Policies []string `json:"policies"`
	Cost     int      `json:"cost,omitempty"` // 0 means 1
	Slot     int64    `json:"slot,omitempty"`
}

// Decision is one policy's part of a check's answer.
type Decision struct {
	Policy       string `json:"policy"`
	Allowed      bool   `json:"allowed"`
	Limit        int    `json:"limit"`
	Remaining    int    `json:"remaining"`
	RetryAfterMs int64  `json:"retry_after_ms"`
	ResetAfterMs int64  `json:"reset_after_ms"`
	// DelayMs, when a leaky bucket admitted the check, is how long to hold
	// the request so that admitted requests leave at the policy's rate.
	DelayMs int64 `json:"delay_ms,omitempty"`
	// Algorithm and Window are set by Inspect. Window is a duration
	// ("1m0s"), or a calendar period and its zone ("1mo;tz=Europe/Paris").
	Algorithm string `json:"algorithm,omitempty"`
	Window    string `json:"window,omitempty"`
}

// CheckResponse is the body of a check (200 when allowed, 429 when denied)
// and of an inspection.
type CheckResponse struct {
	Allowed bool `json:"allowed"`
	// Slot, when the check took slots of concurrency limits, names them
	// for Release.
	Slot      int64      `json:"slot,omitempty"`
	Decisions []Decision `json:"decisions"`
}

// RetryAfter is the longest RetryAfter of the decisions: when denied, how
// long until the same check succeeds.
func (r *CheckResponse) RetryAfter() time.Duration {
	var ms int64
	for _, d := range r.Decisions {
		ms = max(ms, d.RetryAfterMs)
	}
	return time.Duration(ms) * time.Millisecond
}

// Problem is an RFC 9457 problem document, the body of every error the
// service answers with.
type Problem struct {
	Type   string `json:"type,omitempty"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	// Field names the request field that is wrong, for a 4xx.
	Field string `json:"field,omitempty"`
}

// Error is returned for a response that is neither a decision nor a
// success: Status is its HTTP status, Problem its body when it had one.
type Error struct {
	Status  int
	Problem Problem
}

// Error describes the failure.
func (e *Error) Error() string {
	if e.Problem.Detail != "" {
		return fmt.Sprintf("ratelimitd: %d %s: %s", e.Status, e.Problem.Title, e.Problem.Detail)
	}
	return fmt.Sprintf("ratelimitd: %d %s", e.Status, http.StatusText(e.Status))
}

// defaultTimeout bounds a call when the context has no earlier deadline.
const defaultTimeout = 2 * time.Second

// Client calls one ratelimitd. Safe for concurrent use.
type Client struct {
	base  *url.URL
	http  *http.Client
	token string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client; the default has a 2 s timeout and
// its own connection pool. A nil client is ignored.
func WithHTTPClient(h *http.Client) Option {
	return func(c *Client) {
		if h != nil {
			c.http = h
		}
	}
}

// WithToken sets the admin token Reset sends as a bearer token.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// New returns a client of the service at baseURL ("http://127.0.0.1:8080").
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q: want http://host:port", baseURL)
	}
	c := &Client{base: u, http: &http.Client{Timeout: defaultTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	return c, nil
}

// Check checks cost units (0 means 1) of key against the policies, all or
// nothing. A denial is not an error: the response says Allowed false.
func (c *Client) Check(ctx context.Context, key string, policies []string, cost int) (*CheckResponse, error) {
	var res CheckResponse
	err := c.do(ctx, http.MethodPost, "/v1/check", nil, request{Key: key, Policies: policies, Cost: cost}, &res, http.StatusOK, http.StatusTooManyRequests)
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Inspect reports key's state under the policies without consuming
// anything: the answer a check of cost 1 would get.
func (c *Client) Inspect(ctx context.Context, key string, policies []string) (*CheckResponse, error) {
	q := url.Values{"key": {key}, "policy": policies}
	var res CheckResponse
	if err := c.do(ctx, http.MethodGet, "/v1/inspect", q, nil, &res, http.StatusOK); err != nil {
		return nil, err
	}
	return &res, nil
}

// Reset forgets key's state under the policies. It needs the admin token
// (WithToken).
func (c *Client) Reset(ctx context.Context, key string, policies []string) error {
	return c.do(ctx, http.MethodPost, "/v1/reset", nil, request{Key: key, Policies: policies}, nil, http.StatusOK)
}

// Release gives back the slots of concurrency limits that an admitted
// check of key under policies took (POST /v1/release), with the Slot its
// answer named. A slot never given back is free again after its lifetime.
func (c *Client) Release(ctx context.Context, key string, policies []string, slot int64) error {
	return c.do(ctx, http.MethodPost, "/v1/release", nil, request{Key: key, Policies: policies, Slot: slot}, nil, http.StatusOK)
}

func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any, ok ...int) error {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" && path == "/v1/reset" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	for _, s := range ok {
		if resp.StatusCode == s {
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("client: %s %s: decoding the answer: %w", method, path, err)
			}
			return nil
		}
	}
	e := &Error{Status: resp.StatusCode}
	_ = json.Unmarshal(data, &e.Problem)
	return e
}
