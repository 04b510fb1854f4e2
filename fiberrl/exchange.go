package fiberrl

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"github.com/gofiber/fiber/v2"

	"github.com/ratelimit-go/ratelimit/adapter"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
)

// exchange is one request and its response over a *fiber.Ctx: a single
// pointer, it passes as an interface without an allocation. The strings it
// hands out may outlive the request, so they are copies.
type exchange struct{ c *fiber.Ctx }

// routeExchange is an exchange on the route it is installed on: its
// pattern is Ctx.Route().Path.
type routeExchange struct{ exchange }

// tableExchange is an exchange under App.Use with a route table, pooled:
// its pattern is that of the route Fiber will choose, resolved once.
type tableExchange struct {
	exchange
	routes *resolver
	route  string
	known  bool // route is set
}

var tableExchanges = sync.Pool{New: func() any { return new(tableExchange) }}

var (
	_ keyfuncs.Request = exchange{}
	_ adapter.Response = exchange{}
	_ interface {
		HeaderValues(string) []string
	} = exchange{} // the resolver reads every forwarding line through it
	_ interface {
		SetHeaderBytes(string, []byte)
	} = exchange{} // the middleware's allocation-free header path
)

// Method returns the request method. Fiber builds it as a fresh string for
// every request, so it needs no copy.
func (e exchange) Method() string { return e.c.Method() }

// Path returns a copy of the URL path, percent-decoded as net/http's
// URL.Path is (fasthttp also removes dot segments and repeated slashes).
func (e exchange) Path() string { return string(e.c.Request().URI().Path()) }

// Route returns "": App.Use without a route table resolves no pattern.
// Route patterns belong to the app, not to the request, and need no copy.
func (e exchange) Route() string { return "" }

// Route returns the pattern of the route that runs the middleware.
func (e routeExchange) Route() string { return e.c.Route().Path }

// Route returns the pattern of the route Fiber will choose (see the
// package documentation).
func (e *tableExchange) Route() string {
	if !e.known {
		e.known = true
		e.route = e.routes.lookup(e.c.App(), e.c.Method(), e.c.Path())
	}
	return e.route
}

// Header returns a copy of the first value of the named request header.
func (e exchange) Header(name string) string { return string(e.c.Request().Header.Peek(name)) }

// HeaderValues returns copies of every value of the named request header.
func (e exchange) HeaderValues(name string) []string {
	raw := e.c.Request().Header.PeekAll(name)
	if len(raw) == 0 {
		return nil
	}
	vs := make([]string, len(raw))
	for i, v := range raw {
		vs[i] = string(v)
	}
	return vs
}

// RemoteAddr returns the direct peer's address, "ip:port", formatted as
// net.TCPAddr.String formats it (an IPv4-mapped IPv6 address as IPv4) with
// a single allocation.
func (e exchange) RemoteAddr() string {
	addr := e.c.Context().RemoteAddr()
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.String()
	}
	ip, ok := netip.AddrFromSlice(ta.IP)
	if !ok {
		return addr.String()
	}
	var buf [64]byte
	return string(netip.AddrPortFrom(ip.Unmap().WithZone(ta.Zone), uint16(ta.Port)).AppendTo(buf[:0]))
}

// RemoteAddrPort returns the direct peer's address without formatting it
// (see keyfuncs.Request): the zero AddrPort when it is not a TCP address.
func (e exchange) RemoteAddrPort() netip.AddrPort {
	if ta, ok := e.c.Context().RemoteAddr().(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(ta.IP); ok {
			return netip.AddrPortFrom(ip.Unmap(), uint16(ta.Port))
		}
	}
	return netip.AddrPort{}
}

// Context returns the request's user context (Ctx.UserContext) with the
// values stored by Ctx.Locals in front of its own.
func (e exchange) Context() context.Context { return exchangeContext(e) }

// exchangeContext is an exchange seen as the context of its request.
type exchangeContext exchange

func (c exchangeContext) Deadline() (time.Time, bool) { return c.c.UserContext().Deadline() }
func (c exchangeContext) Done() <-chan struct{}       { return c.c.UserContext().Done() }
func (c exchangeContext) Err() error                  { return c.c.UserContext().Err() }
func (c exchangeContext) Value(key any) any {
	if v := c.c.Locals(key); v != nil {
		return v
	}
	return c.c.UserContext().Value(key)
}

// Ctx returns the *fiber.Ctx behind r when this adapter handed r to a key,
// skip, cost or plan function; nil otherwise.
func Ctx(r keyfuncs.Request) *fiber.Ctx {
	if e, ok := r.(interface{ fiberCtx() *fiber.Ctx }); ok {
		return e.fiberCtx()
	}
	return nil
}

// fiberCtx returns the *fiber.Ctx behind e, for Ctx.
func (e exchange) fiberCtx() *fiber.Ctx { return e.c }

// SetHeader sets a response header. fasthttp copies name and value; the
// middleware's names are canonical already, so fasthttp need not
// normalise them.
func (e exchange) SetHeader(name, value string) {
	e.c.Response().Header.SetCanonical(bytesOf(name), bytesOf(value))
}

// SetHeaderBytes sets a response header from bytes valid only during the
// call (see adapter.Response), copied into fasthttp's buffers.
func (e exchange) SetHeaderBytes(name string, value []byte) {
	e.c.Response().Header.SetCanonical(bytesOf(name), value)
}

// bytesOf returns the bytes of s without copying them, for fasthttp calls
// that copy them and never write into them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

var nosniff = []byte("nosniff")

// Write completes the response. The body is copied: the caller may reuse
// it once Write returns.
func (e exchange) Write(status int, contentType string, body []byte) error {
	res := e.c.Response()
	res.SetStatusCode(status)
	res.Header.SetContentType(contentType)
	res.Header.SetCanonical(bytesOf("X-Content-Type-Options"), nosniff)
	res.SetBody(body)
	return nil
}
