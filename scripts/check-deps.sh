#!/usr/bin/env bash
# Proves the root module stays lean: a scratch module outside this repository
# that imports only the library's core packages (core, memstore, redisstore,
# resilient, keyfuncs, the root package and stdhttp) must not pull any web
# framework, gRPC or Prometheus into its module graph. Prints the scratch
# module's `go list -m all` and fails when a forbidden module appears.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/go.mod" <<MOD
module example.com/scratch

go 1.26.0

require github.com/ratelimit-go/ratelimit v0.0.0-00010101000000-000000000000

replace github.com/ratelimit-go/ratelimit => $root
MOD
cat >"$dir/main.go" <<'GO'
package main

import (
	"net/http"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/stdhttp"
)

func main() {
	store, _ := redisstore.New(redis.NewClient(&redis.Options{}))
	fallback, _ := memstore.New()
	wrapped, _ := resilient.New(store, resilient.WithFallback(fallback))
	limiter := core.NewLimiter(wrapped)
	m, _ := ratelimit.New(ratelimit.WithLimiter(limiter), ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("1/s")))
	_ = stdhttp.Middleware(m)(http.NewServeMux())
}
GO
cd "$dir"
export GOWORK=off GOFLAGS=-mod=mod
go mod tidy >/dev/null
go build -o /dev/null .
all=$(go list -m all)
echo "$all"
forbidden='gin-gonic|labstack|gofiber|valyala|quic-go|mongo-driver|google.golang.org/grpc|prometheus|bytedance|envoyproxy'
if bad=$(grep -E "$forbidden" <<<"$all"); then
  echo "check-deps: the root module pulls in:" >&2
  echo "$bad" >&2
  exit 1
fi
echo "check-deps: $(wc -l <<<"$all") modules, none of gin, echo, fiber, fasthttp, quic-go, mongo-driver, gRPC or Prometheus"
