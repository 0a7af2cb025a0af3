// The OpenTelemetry Node SDK, configured from the OTEL_* environment (otlp-mock measure sets the OTLP endpoint and
// protocol): traces, metrics and logs over OTLP. Loaded before the app with node --import.
import { NodeSDK } from '@opentelemetry/sdk-node';

const sdk = new NodeSDK();
sdk.start();
// Flush what the SDK holds before the process ends, as a real service does on SIGTERM.
process.once('SIGTERM', () => {
  sdk.shutdown().finally(() => process.exit(0));
});
