package stdhttp

import (
	"net/http"

	"github.com/ratelimit-go/ratelimit"
)

// Check runs m for one request of a framework built on net/http that knows
// the matched route pattern itself, such as Gin (c.FullPath()) or Echo
// (c.Path()): pattern is reported as the route, and r.Pattern when pattern
// is "". It sets the header fields on w and, when it returns
// ratelimit.Handled, has written the whole response; the caller then
// stops its handler chain. Safe for concurrent use.
func Check(m *ratelimit.Middleware, w http.ResponseWriter, r *http.Request, pattern string) ratelimit.Verdict {
	e := exchanges.Get().(*exchange)
	e.r, e.w, e.pattern = r, w, pattern
	v := m.Handle(r.Context(), e, e)
	*e = exchange{}
	exchanges.Put(e)
	return v
}
