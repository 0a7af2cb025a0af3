// The page under test: a click on "Place order" is one span of service shop-web, sent from the browser to
// otlp-mock's OTLP/HTTP port, another origin than the page's, so every export goes through a CORS preflight.
import { WebTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-web';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SpanStatusCode } from '@opentelemetry/api';

// Vite puts VITE_* variables of the environment it runs in into the bundle; the default is otlp-mock's.
const endpoint = import.meta.env.VITE_OTLP_ENDPOINT ?? 'http://127.0.0.1:4318';

const provider = new WebTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'shop-web' }),
  // Simple, not batched: a click is exported at once, and forceFlush below waits for that export.
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))],
});
provider.register();
const tracer = provider.getTracer('shop-web');

const status = /** @type {HTMLElement} */ (document.getElementById('status'));

document.getElementById('place-order')?.addEventListener('click', async () => {
  tracer.startActiveSpan('place order', { attributes: { 'cart.items': 1, 'cart.total_eur': 8.5 } }, (span) => {
    span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  });
  // "Thank you" only once otlp-mock has answered the export: a thank-you means the span left the page.
  await provider.forceFlush();
  status.textContent = 'Thank you for your order';
});
