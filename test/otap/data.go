package main

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

const base = uint64(1_700_000_000_000_000_000)

// id makes distinct, reproducible ids from the stream, batch and item numbers.
func id(n int, s, b, i int) []byte {
	out := make([]byte, n)
	v := uint64(s+1)<<40 | uint64(b+1)<<20 | uint64(i+1)
	for k := 0; k < n; k++ {
		out[n-1-k] = byte(v >> (8 * (k % 8)))
	}
	out[0] ^= byte(n)
	return out
}

func traceID(s, b, i int) pcommon.TraceID {
	var t pcommon.TraceID
	copy(t[:], id(16, s, b, i))
	return t
}
func spanID(s, b, i int) pcommon.SpanID { var t pcommon.SpanID; copy(t[:], id(8, s, b, i)); return t }

// attrs puts every kind of value, some shared across items and some not.
func attrs(m pcommon.Map, s, b, i int) {
	m.PutStr("http.route", fmt.Sprintf("/api/%d", i%3))
	m.PutInt("attempt", int64(i%4))
	m.PutDouble("ratio", float64(i)/7)
	m.PutBool("sampled", i%2 == 0)
	if i%3 == 0 {
		m.PutEmptyBytes("blob").FromRaw([]byte{byte(s), byte(b), byte(i), 0xff})
		arr := m.PutEmptySlice("tags")
		arr.AppendEmpty().SetStr("a")
		arr.AppendEmpty().SetInt(int64(b))
		kv := m.PutEmptyMap("nested")
		kv.PutStr("k", fmt.Sprintf("v%d", b))
		kv.PutDouble("d", 1.5)
	}
	m.PutStr("unique", fmt.Sprintf("s%d-b%d-i%d", s, b, i))
}

func resource(r pcommon.Resource, s, k int) {
	r.Attributes().PutStr("service.name", fmt.Sprintf("svc-%d-%d", s, k))
	r.Attributes().PutStr("host.name", "otap-host")
	if k == 1 {
		r.SetDroppedAttributesCount(2)
	}
}

func scope(sc pcommon.InstrumentationScope, k int) {
	sc.SetName(fmt.Sprintf("scope-%d", k))
	sc.SetVersion("1.2.3")
	if k == 1 {
		sc.Attributes().PutStr("scope.attr", "x")
	}
}

// split spreads a batch's n items over two resources with two scopes each.
func split(n int, each func(res, sc, from, to int)) {
	at := 0
	for res := 0; res < 2; res++ {
		for sc := 0; sc < 2; sc++ {
			to := at + (n-at)/(4-2*res-sc)
			if res == 1 && sc == 1 {
				to = n
			}
			each(res, sc, at, to)
			at = to
		}
	}
}

func makeTraces(s, b, n int) ptrace.Traces {
	td := ptrace.NewTraces()
	var rs ptrace.ResourceSpans
	split(n, func(res, sc, from, to int) {
		if sc == 0 {
			rs = td.ResourceSpans().AppendEmpty()
			resource(rs.Resource(), s, res)
			rs.SetSchemaUrl("https://opentelemetry.io/schemas/1.21.0")
		}
		ss := rs.ScopeSpans().AppendEmpty()
		scope(ss.Scope(), sc)
		for i := from; i < to; i++ {
			sp := ss.Spans().AppendEmpty()
			sp.SetTraceID(traceID(s, b, i/3))
			sp.SetSpanID(spanID(s, b, i))
			if i%3 != 0 {
				sp.SetParentSpanID(spanID(s, b, i-1))
			}
			sp.SetName(fmt.Sprintf("op-%d", i%5))
			sp.SetKind(ptrace.SpanKind(i % 6))
			start := base + uint64(s)*1e12 + uint64(b)*1e9 + uint64(i)*1e6
			sp.SetStartTimestamp(pcommon.Timestamp(start))
			sp.SetEndTimestamp(pcommon.Timestamp(start + uint64(i+1)*1000))
			if i%4 == 1 {
				sp.TraceState().FromRaw("vendor=x")
			}
			sp.SetFlags(uint32(i % 2))
			attrs(sp.Attributes(), s, b, i)
			if i%5 == 0 {
				sp.SetDroppedAttributesCount(1)
			}
			if i%2 == 0 {
				sp.Status().SetCode(ptrace.StatusCode(i % 3))
				sp.Status().SetMessage(fmt.Sprintf("status %d", i%3))
			}
			for e := 0; e < i%3; e++ {
				ev := sp.Events().AppendEmpty()
				ev.SetName(fmt.Sprintf("event-%d", e))
				ev.SetTimestamp(pcommon.Timestamp(start + uint64(e)*10))
				ev.Attributes().PutStr("event.k", fmt.Sprintf("e%d", e))
				ev.Attributes().PutInt("event.n", int64(i))
			}
			if i%4 == 2 {
				l := sp.Links().AppendEmpty()
				l.SetTraceID(traceID(s, b+1000, i))
				l.SetSpanID(spanID(s, b+1000, i))
				l.TraceState().FromRaw("k=v")
				l.Attributes().PutStr("link.k", "l")
				l.SetFlags(1)
				sp.SetDroppedLinksCount(uint32(i % 2))
			}
			if i%7 == 3 {
				sp.SetDroppedEventsCount(3)
			}
		}
	})
	return td
}

func makeLogs(s, b, n int) plog.Logs {
	ld := plog.NewLogs()
	var rl plog.ResourceLogs
	split(n, func(res, sc, from, to int) {
		if sc == 0 {
			rl = ld.ResourceLogs().AppendEmpty()
			resource(rl.Resource(), s, res)
		}
		sl := rl.ScopeLogs().AppendEmpty()
		scope(sl.Scope(), sc)
		sl.SetSchemaUrl("https://example.com/scope")
		for i := from; i < to; i++ {
			lr := sl.LogRecords().AppendEmpty()
			t := base + uint64(s)*1e12 + uint64(b)*1e9 + uint64(i)*1e6
			if i%5 != 4 {
				lr.SetTimestamp(pcommon.Timestamp(t))
			}
			lr.SetObservedTimestamp(pcommon.Timestamp(t + 7))
			lr.SetSeverityNumber(plog.SeverityNumber(1 + i%24))
			lr.SetSeverityText([]string{"INFO", "WARN", "ERROR"}[i%3])
			switch i % 6 {
			case 0:
				lr.Body().SetStr(fmt.Sprintf("message %d of batch %d", i, b))
			case 1:
				lr.Body().SetInt(int64(i))
			case 2:
				lr.Body().SetDouble(float64(i) / 3)
			case 3:
				lr.Body().SetBool(true)
			case 4:
				lr.Body().SetEmptyMap().PutStr("event", "login")
			}
			if i%2 == 0 {
				lr.SetTraceID(traceID(s, b, i))
				lr.SetSpanID(spanID(s, b, i))
				lr.SetFlags(1)
			}
			if i%3 == 1 {
				lr.SetEventName("app.event")
			}
			attrs(lr.Attributes(), s, b, i)
			if i%5 == 0 {
				lr.SetDroppedAttributesCount(4)
			}
		}
	})
	return ld
}

// makeMetrics makes n data points over metrics of every type.
func makeMetrics(s, b, n int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	var rm pmetric.ResourceMetrics
	split(n, func(res, sc, from, to int) {
		if sc == 0 {
			rm = md.ResourceMetrics().AppendEmpty()
			resource(rm.Resource(), s, res)
		}
		sm := rm.ScopeMetrics().AppendEmpty()
		scope(sm.Scope(), sc)
		for i := from; i < to; {
			m := sm.Metrics().AppendEmpty()
			kind := i % 5
			m.SetName(fmt.Sprintf("metric.%d", kind))
			m.SetDescription(fmt.Sprintf("kind %d", kind))
			m.SetUnit("ms")
			points := 1 + i%3
			if i+points > to {
				points = to - i
			}
			t := base + uint64(s)*1e12 + uint64(b)*1e9 + uint64(i)*1e6
			for p := 0; p < points; p++ {
				k := i + p
				switch kind {
				case 0:
					if p == 0 {
						m.SetEmptyGauge()
					}
					pt := m.Gauge().DataPoints().AppendEmpty()
					common(pt.Attributes(), pt.SetStartTimestamp, pt.SetTimestamp, t, k)
					pt.SetDoubleValue(float64(k) * 1.25)
					ex := pt.Exemplars().AppendEmpty()
					ex.SetTimestamp(pcommon.Timestamp(t))
					ex.SetDoubleValue(0.5)
					ex.SetTraceID(traceID(s, b, k))
					ex.SetSpanID(spanID(s, b, k))
					ex.FilteredAttributes().PutStr("ex", "y")
				case 1:
					if p == 0 {
						m.SetEmptySum().SetIsMonotonic(true)
						m.Sum().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
					}
					pt := m.Sum().DataPoints().AppendEmpty()
					common(pt.Attributes(), pt.SetStartTimestamp, pt.SetTimestamp, t, k)
					pt.SetIntValue(int64(k * 10))
					pt.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(k%4 == 1))
				case 2:
					if p == 0 {
						m.SetEmptyHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityDelta)
					}
					pt := m.Histogram().DataPoints().AppendEmpty()
					common(pt.Attributes(), pt.SetStartTimestamp, pt.SetTimestamp, t, k)
					pt.SetCount(uint64(k + 3))
					pt.SetSum(float64(k) * 2.5)
					if k%2 == 0 {
						pt.SetMin(0.5)
						pt.SetMax(float64(k) + 9)
					}
					pt.BucketCounts().FromRaw([]uint64{1, 1, uint64(k + 1)})
					pt.ExplicitBounds().FromRaw([]float64{1, 10})
				case 3:
					if p == 0 {
						m.SetEmptyExponentialHistogram().SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
					}
					pt := m.ExponentialHistogram().DataPoints().AppendEmpty()
					common(pt.Attributes(), pt.SetStartTimestamp, pt.SetTimestamp, t, k)
					pt.SetCount(uint64(k + 5))
					pt.SetSum(float64(k) + 0.25)
					pt.SetScale(int32(k % 4))
					pt.SetZeroCount(1)
					pt.SetZeroThreshold(0.001)
					pt.Positive().SetOffset(int32(k % 3))
					pt.Positive().BucketCounts().FromRaw([]uint64{1, 2, uint64(k)})
					pt.Negative().SetOffset(-1)
					pt.Negative().BucketCounts().FromRaw([]uint64{1})
					if k%2 == 1 {
						pt.SetMin(-1)
						pt.SetMax(float64(k))
					}
				default:
					if p == 0 {
						m.SetEmptySummary()
					}
					pt := m.Summary().DataPoints().AppendEmpty()
					common(pt.Attributes(), pt.SetStartTimestamp, pt.SetTimestamp, t, k)
					pt.SetCount(uint64(k + 1))
					pt.SetSum(float64(k) * 3)
					q := pt.QuantileValues().AppendEmpty()
					q.SetQuantile(0.5)
					q.SetValue(float64(k))
					q = pt.QuantileValues().AppendEmpty()
					q.SetQuantile(0.99)
					q.SetValue(float64(k) * 2)
				}
			}
			i += points
		}
	})
	return md
}

func common(m pcommon.Map, start, at func(pcommon.Timestamp), t uint64, k int) {
	start(pcommon.Timestamp(t - 1e9))
	at(pcommon.Timestamp(t + uint64(k)))
	m.PutStr("host", fmt.Sprintf("h%d", k%2))
	m.PutInt("k", int64(k))
}
