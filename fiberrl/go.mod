module github.com/ratelimit-go/ratelimit/fiberrl

go 1.26.0

require github.com/ratelimit-go/ratelimit v0.0.0-00010101000000-000000000000

replace github.com/ratelimit-go/ratelimit => ../

require (
	github.com/gofiber/fiber/v2 v2.52.15
	github.com/ratelimit-go/ratelimit/internal/fibertest v0.0.0-00010101000000-000000000000
	github.com/valyala/fasthttp v1.51.0
)

require (
	github.com/andybalholm/brotli v1.1.0 // indirect
	github.com/dunglas/httpsfv v1.1.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/rivo/uniseg v0.2.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/tcplisten v1.0.0 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/ratelimit-go/ratelimit/internal/fibertest => ../internal/fibertest
