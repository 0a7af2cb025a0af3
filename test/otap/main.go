// otap-client sends deterministic telemetry to otlp-mock over OTAP (otel-arrow's producer on its gRPC stubs) or,
// for comparison, the same pdata over OTLP/gRPC. It prints one JSON line per batch status it reads, and a summary.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	arrowpb "github.com/open-telemetry/otel-arrow/go/api/experimental/arrow/v1"
	"github.com/open-telemetry/otel-arrow/go/pkg/otel/arrow_record"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

type status struct {
	Stream  int    `json:"stream"`
	Batch   int64  `json:"batch"`
	Code    int32  `json:"code"`
	Message string `json:"message"`
}

type summary struct {
	Sent     int     `json:"sent"`
	Statuses int     `json:"statuses"`
	Items    int     `json:"items"`
	Seconds  float64 `json:"seconds"`
	Error    string  `json:"error,omitempty"`
}

func main() {
	endpoint := flag.String("endpoint", "127.0.0.1:4317", "gRPC host:port")
	signal := flag.String("signal", "traces", "traces, logs or metrics")
	via := flag.String("via", "otap", "otap or otlp")
	batches := flag.Int("batches", 10, "batches per stream")
	size := flag.Int("size", 10, "items per batch")
	streams := flag.Int("streams", 1, "concurrent streams, each with its own producer")
	noRead := flag.Bool("no-read", false, "send every batch without reading statuses, then wait")
	header := flag.String("header", "", "name=value metadata sent with each stream")
	quiet := flag.Bool("quiet", false, "print only the summary")
	retry := flag.Duration("retry", 0, "resend a batch answered UNAVAILABLE after this wait, as otel-arrow's exporter retries it (0: never)")
	linger := flag.Duration("linger", 0, "keep each stream open this long after its last status")
	end := flag.String("end", "close", "how each stream ends: close (half-close, then read the server's end) or cancel (RST_STREAM CANCEL)")
	save := flag.String("save", "", "also write each OTAP batch sent to this file as a gRPC message (5-byte prefix, then BatchArrowRecords): one stream to replay")
	flag.Parse()
	if *save != "" {
		if *streams != 1 || *via != "otap" {
			fail(fmt.Errorf("-save takes one OTAP stream"))
		}
		f, err := os.Create(*save)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		saved = f
	}

	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(256<<20)))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	ctx := context.Background()
	if *header != "" {
		for i := 0; i < len(*header); i++ {
			if (*header)[i] == '=' {
				ctx = metadata.AppendToOutgoingContext(ctx, (*header)[:i], (*header)[i+1:])
				break
			}
		}
	}

	out := json.NewEncoder(os.Stdout)
	var mu sync.Mutex
	total := summary{}
	began := time.Now()
	var wg sync.WaitGroup
	for s := 0; s < *streams; s++ {
		wg.Add(1)
		go func(s int) {
			defer wg.Done()
			report := func(st status) {
				mu.Lock()
				defer mu.Unlock()
				total.Statuses++
				if !*quiet {
					out.Encode(st)
				}
			}
			sent, items, err := run(ctx, conn, *signal, *via, s, *batches, *size, *noRead, *retry, *linger, *end == "cancel", report)
			mu.Lock()
			total.Sent += sent
			total.Items += items
			if err != nil && total.Error == "" {
				total.Error = err.Error()
			}
			mu.Unlock()
		}(s)
	}
	wg.Wait()
	total.Seconds = time.Since(began).Seconds()
	out.Encode(total)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// saved receives each OTAP batch sent, framed as on the wire, when -save is given (one stream's batches).
var saved io.Writer

func saveBatch(bar *arrowpb.BatchArrowRecords) error {
	if saved == nil {
		return nil
	}
	body, err := proto.Marshal(bar)
	if err != nil {
		return err
	}
	prefix := []byte{0, byte(len(body) >> 24), byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	if _, err = saved.Write(append(prefix, body...)); err != nil {
		return err
	}
	return nil
}

type arrowStream interface {
	Send(*arrowpb.BatchArrowRecords) error
	Recv() (*arrowpb.BatchStatus, error)
	CloseSend() error
}

// run sends one stream's batches; batch b of stream s holds the same data whichever way it is sent.
func run(ctx context.Context, conn *grpc.ClientConn, signal, via string, s, batches, size int, noRead bool, retry, linger time.Duration, cancelAtEnd bool, report func(status)) (int, int, error) {
	items := 0
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if via == "otlp" {
		for b := 0; b < batches; b++ {
			var err error
			switch signal {
			case "traces":
				_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(makeTraces(s, b, size)))
			case "logs":
				_, err = plogotlp.NewGRPCClient(conn).Export(ctx, plogotlp.NewExportRequestFromLogs(makeLogs(s, b, size)))
			default:
				_, err = pmetricotlp.NewGRPCClient(conn).Export(ctx, pmetricotlp.NewExportRequestFromMetrics(makeMetrics(s, b, size)))
			}
			if err != nil {
				return b, items, err
			}
			items += size
			report(status{Stream: s, Batch: int64(b)})
		}
		return batches, items, nil
	}

	var stream arrowStream
	var err error
	switch signal {
	case "traces":
		stream, err = arrowpb.NewArrowTracesServiceClient(conn).ArrowTraces(ctx)
	case "logs":
		stream, err = arrowpb.NewArrowLogsServiceClient(conn).ArrowLogs(ctx)
	default:
		stream, err = arrowpb.NewArrowMetricsServiceClient(conn).ArrowMetrics(ctx)
	}
	if err != nil {
		return 0, 0, err
	}
	producer := arrow_record.NewProducer()
	defer producer.Close()
	sent := 0
	var last arrowpb.StatusCode
	retries := 0
	recv := func() error {
		st, err := stream.Recv()
		if err != nil {
			return err
		}
		last = st.StatusCode
		report(status{Stream: s, Batch: st.BatchId, Code: int32(st.StatusCode), Message: st.StatusMessage})
		return nil
	}
	for b := 0; b < batches; b++ {
		var bar *arrowpb.BatchArrowRecords
		switch signal {
		case "traces":
			bar, err = producer.BatchArrowRecordsFromTraces(makeTraces(s, b, size))
		case "logs":
			bar, err = producer.BatchArrowRecordsFromLogs(makeLogs(s, b, size))
		default:
			bar, err = producer.BatchArrowRecordsFromMetrics(makeMetrics(s, b, size))
		}
		if err == nil {
			err = saveBatch(bar)
		}
		if err != nil {
			return sent, items, err
		}
		if err = stream.Send(bar); err != nil {
			return sent, items, err
		}
		sent++
		items += size
		if !noRead {
			if err = recv(); err != nil {
				return sent, items, err
			}
			// Only UNAVAILABLE: the exporter gives up RESOURCE_EXHAUSTED without RetryInfo, which a BatchStatus cannot carry.
			if retry > 0 && last == arrowpb.StatusCode_UNAVAILABLE && retries < 5 {
				retries++
				time.Sleep(retry)
				b--
				items -= size
			} else {
				retries = 0
			}
		}
	}
	if noRead {
		time.Sleep(2 * time.Second)
		for i := 0; i < sent; i++ {
			if err = recv(); err != nil {
				return sent, items, err
			}
		}
	}
	time.Sleep(linger)
	if cancelAtEnd {
		cancel()
		return sent, items, nil
	}
	if err = stream.CloseSend(); err != nil {
		return sent, items, err
	}
	if _, err = stream.Recv(); err != io.EOF {
		return sent, items, fmt.Errorf("stream end: %v", err)
	}
	return sent, items, nil
}
