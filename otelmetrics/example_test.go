package otelmetrics_test

import (
	"log"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/otelmetrics"
)

// The observer on a Meter of an OpenTelemetry SDK MeterProvider (with the
// exporter of your choice as its reader), installed on the middleware.
func Example() {
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	obs, err := otelmetrics.New(provider.Meter("ratelimit"))
	if err != nil {
		log.Fatal(err)
	}
	m, err := ratelimit.New(
		ratelimit.WithKeyFunc(keyfuncs.RemoteIP),
		ratelimit.WithPolicy(core.MustParsePolicy("100/1m;name=api")),
		ratelimit.WithObserver(obs),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = m
}
