// Package checkout is the code under test: each order is traced (POST /checkout → reserve stock, charge card).
package checkout

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// PlaceOrder charges the card and reports whether the charge went through.
func PlaceOrder(ctx context.Context, tracer trace.Tracer, amount float64, card string) bool {
	ctx, root := tracer.Start(ctx, "POST /checkout", trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attribute.String("http.route", "/checkout")))
	defer root.End()
	_, reserve := tracer.Start(ctx, "reserve stock", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.Int("items", 2)))
	reserve.End()
	_, charge := tracer.Start(ctx, "charge card", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attribute.Float64("amount", amount)))
	defer charge.End()
	if card == "declined" {
		charge.SetStatus(codes.Error, "card declined")
		return false
	}
	return true
}
