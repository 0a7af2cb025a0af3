// A program that sends one trace and one counter to an OTLP endpoint over HTTP/protobuf, set up with the
// OpenTelemetry Go SDK. The exporters read OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME; the protocol is the
// package imported (otlptracehttp here, otlptracegrpc for gRPC), whatever OTEL_EXPORTER_OTLP_PROTOCOL says.
package main

import (
	"context"
	"log"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

func main() {
	ctx := context.Background()
	traceExporter, err := otlptracehttp.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tracerProvider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(traceExporter))
	metricExporter, err := otlpmetrichttp.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	meterProvider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExporter)))

	orders, err := meterProvider.Meter("quickstart").Int64Counter("orders")
	if err != nil {
		log.Fatal(err)
	}
	_, span := tracerProvider.Tracer("quickstart").Start(ctx, "place order")
	orders.Add(ctx, 1, metric.WithAttributes(attribute.String("payment", "card")))
	span.End()

	// Shutdown sends what is batched: a short-lived program that skips it sends nothing.
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tracerProvider.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	if err := meterProvider.Shutdown(ctx); err != nil {
		log.Fatal(err)
	}
	log.Print("sent a trace and a metric")
}
