"""The code under test: a checkout that traces each order (POST /checkout → reserve stock, charge card)."""
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode


def place_order(tracer: trace.Tracer, amount: float, card: str) -> bool:
    with tracer.start_as_current_span("POST /checkout", kind=SpanKind.SERVER, attributes={"http.route": "/checkout"}):
        with tracer.start_as_current_span("reserve stock", kind=SpanKind.CLIENT, attributes={"items": 2}):
            pass
        with tracer.start_as_current_span("charge card", kind=SpanKind.CLIENT, attributes={"amount": amount}) as charge:
            if card == "declined":
                charge.set_status(Status(StatusCode.ERROR, "card declined"))
                return False
    return True
