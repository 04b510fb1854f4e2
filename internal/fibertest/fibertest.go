// Package fibertest exposes a Fiber app as an http.Handler, so that tests
// written for net/http (the shared HTTP conformance suite, the examples'
// behaviour checks) can drive Fiber apps too.
package fibertest

import (
	"net"
	"net/http"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// Handler exposes app as an http.Handler. Unlike a server it does not parse
// bytes off a socket: the request's method, URI, header lines (each line
// kept, in order, values verbatim) and peer address are handed to the app's
// fasthttp handler as they are, and the response's status, header fields and
// body are copied back.
func Handler(app *fiber.App) http.Handler {
	h := app.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req fasthttp.Request
		req.Header.SetMethod(r.Method)
		req.SetRequestURI(r.RequestURI)
		req.Header.SetHost(r.Host)
		for name, vs := range r.Header {
			for _, v := range vs {
				req.Header.Add(name, v)
			}
		}
		peer, err := net.ResolveTCPAddr("tcp", r.RemoteAddr)
		if err != nil {
			http.Error(w, "bad RemoteAddr", http.StatusInternalServerError)
			return
		}
		var fctx fasthttp.RequestCtx
		fctx.Init(&req, peer, nil)
		h(&fctx)
		fctx.Response.Header.VisitAll(func(k, v []byte) { w.Header().Add(string(k), string(v)) })
		w.WriteHeader(fctx.Response.StatusCode())
		_, _ = w.Write(fctx.Response.Body())
	})
}
