"""The SDK set up by hand: the protocol is the exporter class imported, one package per protocol, and
OTEL_EXPORTER_OTLP_PROTOCOL picks nothing. Run as: python by_hand.py http/protobuf|grpc"""
import sys

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

if sys.argv[1] == "grpc":
    # OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://localhost:4317
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
else:
    # OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://localhost:4318 (the exporter adds /v1/traces)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

provider = TracerProvider(resource=Resource.create())
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
with provider.get_tracer("quickstart").start_as_current_span("place order by hand"):
    pass
# Shutdown sends what is batched.
provider.shutdown()
print(f"sent a trace over {sys.argv[1]}")
