// otap-collector runs the Collector contrib otelarrow receiver into nop consumers, the reference for OTAP ingest
// speed that bench/otap.js measures otlp-mock against. It listens on the endpoint given and runs until killed.
package main

import (
	"context"
	"flag"
	"os"
	"os/signal"

	"github.com/open-telemetry/opentelemetry-collector-contrib/receiver/otelarrowreceiver"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:14417", "gRPC host:port")
	flag.Parse()
	factory := otelarrowreceiver.NewFactory()
	cfg := factory.CreateDefaultConfig().(*otelarrowreceiver.Config)
	cfg.GRPC.NetAddr.Endpoint = *endpoint
	settings := receivertest.NewNopSettings(factory.Type())
	ctx := context.Background()
	host := componenttest.NewNopHost()
	sink := consumertest.NewNop()
	traces, err := factory.CreateTraces(ctx, settings, cfg, sink)
	check(err)
	logs, err := factory.CreateLogs(ctx, settings, cfg, sink)
	check(err)
	metrics, err := factory.CreateMetrics(ctx, settings, cfg, sink)
	check(err)
	// The factory shares one receiver between the three signals: starting it once serves them all.
	check(traces.Start(ctx, host))
	_, _ = logs, metrics
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, os.Kill)
	<-stop
	check(traces.Shutdown(ctx))
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
