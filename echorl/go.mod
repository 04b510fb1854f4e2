module github.com/ratelimit-go/ratelimit/echorl

go 1.26.0

require (
	github.com/labstack/echo/v4 v4.16.0
	github.com/ratelimit-go/ratelimit v0.0.0-00010101000000-000000000000
)

require github.com/stretchr/testify v1.12.1 // indirect

require (
	github.com/dunglas/httpsfv v1.1.2 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/labstack/gommon v0.5.0 // indirect
	github.com/mattn/go-colorable v0.1.15 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	github.com/valyala/fasttemplate v1.2.2 // indirect
	go.uber.org/goleak v1.3.0 // indirect
	golang.org/x/crypto v0.58.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)

replace github.com/ratelimit-go/ratelimit => ../
