"""pytest against a running otlp-mock (npx otlp-mock), through its REST API with the standard library only."""
import json
import os
import urllib.request

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from checkout import place_order

API = os.environ.get("OTLP_MOCK_URL", "http://127.0.0.1:4319")
OTLP = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")


def api(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {} if body is None else {"content-type": "application/json"}
    request = urllib.request.Request(API + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request) as response:
        text = response.read()
        return json.loads(text) if text else None


def verify(*expectations, timeout_ms=10000):
    """Fails the test with otlp-mock's own explanation when an expectation does not hold."""
    result = api("POST", "/api/verify", {"timeoutMs": timeout_ms, "expectations": list(expectations)})
    assert result["ok"], result["message"]


@pytest.fixture
def tracer():
    api("DELETE", "/api/telemetry")
    api("DELETE", "/api/faults")
    provider = TracerProvider(resource=Resource.create({"service.name": "checkout"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{OTLP}/v1/traces")))
    yield provider.get_tracer("checkout")
    provider.shutdown()


def test_an_order_is_traced(tracer):
    assert place_order(tracer, 42.0, "visa")
    verify(
        {"signal": "spans", "where": {"service": "checkout", "name": "POST /checkout"}, "kind": "server", "root": True, "count": {"exactly": 1}},
        {"signal": "spans", "where": {"name": "charge card"}, "childOf": {"where": {"name": "POST /checkout"}}, "attributes": {"amount": {"atLeast": 1}}},
        {"signal": "spans", "status": "error", "count": {"none": True}},
    )


def test_a_declined_card_is_an_error_span(tracer):
    assert not place_order(tracer, 13.0, "declined")
    verify({"signal": "spans", "where": {"name": "charge card", "error": True}, "descendantOf": {"root": True}, "count": 1})


def test_the_exporter_waits_as_retry_after_says(tracer):
    # The Python exporter backs off about 1 s, give or take a fifth: a Retry-After of half a second is
    # honoured whatever its jitter draws.
    rule = api("POST", "/api/faults", {"action": "throttle", "signals": ["traces"], "times": 1, "retryAfterMs": 500})
    tracer.start_span("retried").end()
    verify({"signal": "spans", "where": {"name": "retried"}})
    report = api("GET", f"/api/faults/{rule['id']}/report")
    assert report["verdict"] == "honoured Retry-After", report["message"]
