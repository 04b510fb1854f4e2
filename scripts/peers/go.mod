module example.com/ratelimit-peers

go 1.26.0

require (
	github.com/go-chi/httprate v0.16.1
	github.com/gofiber/fiber/v2 v2.52.15
	github.com/labstack/echo/v4 v4.16.0
	github.com/ratelimit-go/ratelimit v0.0.0
	github.com/ratelimit-go/ratelimit/echorl v0.0.0
	github.com/ratelimit-go/ratelimit/fiberrl v0.0.0
	github.com/sethvargo/go-limiter v1.0.0
	github.com/valyala/fasthttp v1.51.0
	golang.org/x/time v0.16.0
)

require (
	github.com/andybalholm/brotli v1.1.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/philhofer/fwd v1.1.3-0.20240916144458-20a13a1f6b7c // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/tinylib/msgp v1.2.5 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	github.com/valyala/tcplisten v1.0.0 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/ratelimit-go/ratelimit => ../..

replace github.com/ratelimit-go/ratelimit/fiberrl => ../../fiberrl

replace github.com/ratelimit-go/ratelimit/echorl => ../../echorl

replace github.com/ratelimit-go/ratelimit/internal/fibertest => ../../internal/fibertest
