package ratelimit

import (
	"errors"
	"net/http"

	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/internal/fields"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// denyProblem answers 429 with an application/problem+json document of the
// draft's quota-exceeded type naming the violated policies.
func denyProblem(_ keyfuncs.Request, res adapter.Response, result core.Result) error {
	return res.Write(http.StatusTooManyRequests, fields.ContentTypeProblem, fields.DeniedProblem(result))
}

// errorProblem answers status with an application/problem+json document
// whose only detail is a *keyfuncs.MissingKeyError's Source.
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
