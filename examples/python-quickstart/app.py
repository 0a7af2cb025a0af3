"""A program with no exporter set up: run under opentelemetry-instrument, which sets up the SDK from the
OTEL_* environment (OTEL_EXPORTER_OTLP_PROTOCOL included) and sends a span, a log record and a counter."""
import logging

from opentelemetry import metrics, trace

tracer = trace.get_tracer("quickstart")
orders = metrics.get_meter("quickstart").create_counter("orders")

with tracer.start_as_current_span("place order"):
    orders.add(1, {"payment": "card"})
    logging.getLogger("quickstart").warning("order placed")
print("sent a trace, a log record and a metric")
