package checkout

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// A running otlp-mock (npx otlp-mock): its REST API, and the OTLP/HTTP endpoint the exporter sends to.
var (
	api  = env("OTLP_MOCK_URL", "http://127.0.0.1:4319")
	otlp = env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
)

func env(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func call(t *testing.T, method, path string, body any) map[string]any {
	t.Helper()
	var payload bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&payload).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(method, api+path, &payload)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("content-type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("otlp-mock is not reachable at %s: %v", api, err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode >= 400 {
		t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, out)
	}
	return out
}

// verify fails the test with otlp-mock's own explanation when an expectation does not hold.
func verify(t *testing.T, expectations ...map[string]any) {
	t.Helper()
	result := call(t, "POST", "/api/verify", map[string]any{"timeoutMs": 10000, "expectations": expectations})
	if result["ok"] != true {
		t.Fatal(result["message"])
	}
}

func tracer(t *testing.T) trace.Tracer {
	call(t, "DELETE", "/api/telemetry", nil)
	call(t, "DELETE", "/api/faults", nil)
	exporter, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(otlp+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithSyncer(exporter),
		sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName("checkout"))),
	)
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	return provider.Tracer("checkout")
}

func TestAnOrderIsTraced(t *testing.T) {
	if !PlaceOrder(context.Background(), tracer(t), 42, "visa") {
		t.Fatal("the order was declined")
	}
	verify(t,
		map[string]any{"signal": "spans", "where": map[string]any{"service": "checkout", "name": "POST /checkout"}, "kind": "server", "root": true, "count": map[string]any{"exactly": 1}},
		map[string]any{"signal": "spans", "where": map[string]any{"name": "charge card"}, "childOf": map[string]any{"where": map[string]any{"name": "POST /checkout"}}, "attributes": map[string]any{"amount": map[string]any{"atLeast": 1}}},
		map[string]any{"signal": "spans", "status": "error", "count": map[string]any{"none": true}},
	)
}

func TestADeclinedCardIsAnErrorSpan(t *testing.T) {
	if PlaceOrder(context.Background(), tracer(t), 13, "declined") {
		t.Fatal("the order went through")
	}
	verify(t, map[string]any{"signal": "spans", "where": map[string]any{"name": "charge card", "error": true}, "descendantOf": map[string]any{"root": true}, "count": 1})
}

func TestTheExporterRetriesWhenThrottled(t *testing.T) {
	tr := tracer(t)
	rule := call(t, "POST", "/api/faults", map[string]any{"action": "throttle", "signals": []string{"traces"}, "times": 1, "retryAfterMs": 1000})
	_, span := tr.Start(context.Background(), "retried")
	span.End()
	verify(t, map[string]any{"signal": "spans", "where": map[string]any{"name": "retried"}})
	report := call(t, "GET", "/api/faults/"+rule["id"].(string)+"/report", nil)
	if report["verdict"] != "honoured Retry-After" {
		t.Fatal(report["message"])
	}
}
