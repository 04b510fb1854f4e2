module example.com/ratelimit-peers

go 1.26.0

require (
	github.com/go-chi/httprate v0.16.1
	github.com/ratelimit-go/ratelimit v0.0.0
	github.com/sethvargo/go-limiter v1.0.0
)

require (
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/zeebo/xxh3 v1.0.2 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/ratelimit-go/ratelimit => ../..
