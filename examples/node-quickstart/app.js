// The OpenTelemetry JS SDK set up by hand: the protocol is the exporter package imported (-proto here: HTTP
// protobuf; -grpc, -http for JSON), and OTEL_EXPORTER_OTLP_PROTOCOL picks nothing. The exporters read
// OTEL_EXPORTER_OTLP_ENDPOINT (and add /v1/traces, /v1/logs, /v1/metrics); OTEL_SERVICE_NAME names the service.
import { detectResources, envDetector } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { LoggerProvider, BatchLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';

const resource = detectResources({ detectors: [envDetector] });
const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
const loggerProvider = new LoggerProvider({ resource, processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter() })] });
const meterProvider = new MeterProvider({ resource, readers: [new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter() })] });

const span = tracerProvider.getTracer('quickstart').startSpan('place order');
meterProvider.getMeter('quickstart').createCounter('orders').add(1, { payment: 'card' });
loggerProvider.getLogger('quickstart').emit({ severityText: 'INFO', body: 'order placed' });
span.end();

// Shutdown sends what is batched: a short-lived program that skips it sends nothing.
await Promise.all([tracerProvider.shutdown(), loggerProvider.shutdown(), meterProvider.shutdown()]);
console.log('sent a trace, a log record and a metric');
