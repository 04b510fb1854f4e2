// Package nethttp runs a ratelimit.Middleware for one net/http request: the
// request and response view that the stdhttp, Gin and Echo adapters share.
package nethttp
