// A small HTTP service to measure: each request does a little work and, when telemetry is on, records a span
// and a counter through the OpenTelemetry API (a no-op without an SDK, which is the baseline).
import http from 'node:http';
import { trace, metrics } from '@opentelemetry/api';

const tracer = trace.getTracer('measure-example');
const meter = metrics.getMeter('measure-example');
const served = meter.createCounter('app.requests');
// Reported at every export, load or none, so that even an idle run sends something.
meter.createObservableGauge('app.heap.used', { unit: 'By' }).addCallback((result) => result.observe(process.memoryUsage().heapUsed));
const port = Number(process.env.PORT ?? 3000);

const server = http.createServer((req, res) => {
  tracer.startActiveSpan('GET /', { attributes: { 'http.route': '/', 'url.path': req.url ?? '/' } }, (span) => {
    let sum = 0;
    for (let i = 0; i < 2000; i++) sum += Math.sqrt(i);
    served.add(1, { route: '/' });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`ok ${sum.toFixed(0)}\n`);
    span.end();
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close());
