package ratelimit

import (
	"errors"
	"net/http"

	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// DeniedHandler writes the response to a request a policy denied. When it
// is called, the rate-limit header fields and Retry-After are already set
// on res. It must call res.Write exactly once, with a 4xx or 5xx status;
// if it returns without writing, the default denial completes the
// response. result.Decisions is reused after it returns. The error of
// res.Write is returned.
type DeniedHandler func(req keyfuncs.Request, res adapter.Response, result core.Result) error

// ErrorHandler writes the response to a request the middleware refuses
// without a denial: status is 400 (or the status of a
// *keyfuncs.MissingKeyError) for an unusable key, 413 for a cost larger
// than a policy's capacity, 503 when the limiter failed and the failure
// mode is FailClosed. err says why; it may hold internal details and must
// not be written into the response. It must call res.Write exactly once;
// if it returns without writing, the default error response completes the
// response.
type ErrorHandler func(req keyfuncs.Request, res adapter.Response, status int, err error) error

// denyProblem answers 429 Too Many Requests with an
// application/problem+json document of the draft's quota-exceeded type whose
// "violated-policies" names the policies that denied the request (their
// PolicyName).
func denyProblem(_ keyfuncs.Request, res adapter.Response, result core.Result) error {
	return res.Write(http.StatusTooManyRequests, fields.ContentTypeProblem, fields.DeniedProblem(result))
}

// errorProblem answers status with an application/problem+json
// document of type "about:blank" whose title is the status text. Only a
// *keyfuncs.MissingKeyError contributes a detail (its Source, which key
// functions promise is safe to show); no other error text is written.
func errorProblem(_ keyfuncs.Request, res adapter.Response, status int, err error) error {
	p := fields.Problem{Type: "about:blank", Title: http.StatusText(status), Status: status}
	var mk *keyfuncs.MissingKeyError
	switch {
	case errors.As(err, &mk):
		p.Detail = "Missing rate-limit key: " + mk.Source + "."
	case errors.Is(err, core.ErrInvalidKey):
		p.Detail = "The request's rate-limit key is unusable."
	case errors.Is(err, core.ErrCostExceedsCapacity):
		p.Detail = "The request costs more than the quota can ever admit."
	case errors.Is(err, ErrUnknownPlan):
		p.Detail = "The caller's plan has no rate limit."
	case status == http.StatusServiceUnavailable:
		p.Detail = "Rate limiting is unavailable; try again later."
	}
	return fields.WriteProblem(res, &p)
}
