// A real OTLP profiles producer for the interop tests: builds profiles with pdata's pprofile and sends them
// as the Collector's own code does, over gRPC (pprofileotlp's client), HTTP protobuf or HTTP JSON
// (ExportRequest's MarshalProto / MarshalJSON), or writes the request's bytes to stdout.
//
//	profiles-producer grpc|http-proto|http-json <host:port> <service> [version]
//	profiles-producer proto|json <service>
//	profiles-producer load <host:port> <requests> <workers>
//
// It prints one JSON line: the answer's status and partial success; `load` sends the same HTTP protobuf
// request that many times from that many workers and prints how long that took.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// Start is the profiles' time: 2023-11-14T22:13:20Z.
const Start = 1700000000000000000

type dictionary struct {
	d       pprofile.ProfilesDictionary
	strings map[string]int32
}

func (x *dictionary) str(s string) int32 {
	if i, ok := x.strings[s]; ok {
		return i
	}
	i := int32(x.d.StringTable().Len())
	x.d.StringTable().Append(s)
	x.strings[s] = i
	return i
}

// function adds a function and a location of one line in it, returning the location's index.
func (x *dictionary) location(name, file string, line int64, address uint64) int32 {
	f := x.d.FunctionTable().AppendEmpty()
	f.SetNameStrindex(x.str(name))
	f.SetSystemNameStrindex(x.str("sys." + name))
	f.SetFilenameStrindex(x.str(file))
	f.SetStartLine(line - 2)
	l := x.d.LocationTable().AppendEmpty()
	l.SetMappingIndex(1)
	l.SetAddress(address)
	ln := l.Lines().AppendEmpty()
	ln.SetFunctionIndex(int32(x.d.FunctionTable().Len() - 1))
	ln.SetLine(line)
	ln.SetColumn(7)
	return int32(x.d.LocationTable().Len() - 1)
}

// stack adds a stack of locations, leaf first.
func (x *dictionary) stack(locations ...int32) int32 {
	s := x.d.StackTable().AppendEmpty()
	s.LocationIndices().Append(locations...)
	return int32(x.d.StackTable().Len() - 1)
}

func (x *dictionary) attribute(key, value, unit string) int32 {
	a := x.d.AttributeTable().AppendEmpty()
	a.SetKeyStrindex(x.str(key))
	a.Value().SetStr(value)
	a.SetUnitStrindex(x.str(unit))
	return int32(x.d.AttributeTable().Len() - 1)
}

func sample(p pprofile.Profile, stack int32, link int32, attrs []int32, values ...int64) {
	s := p.Samples().AppendEmpty()
	s.SetStackIndex(stack)
	s.SetLinkIndex(link)
	s.AttributeIndices().Append(attrs...)
	for i, v := range values {
		s.Values().Append(v)
		s.TimestampsUnixNano().Append(uint64(Start + int64(i+1)*1_000_000))
	}
}

// build makes two profiles of one service: cpu (four samples, one linked to a span) and alloc_space (two).
// Functions, in every stack from the leaf: parse ← handle ← main, compress ← handle ← main, main.
func build(service string) pprofile.Profiles {
	profiles := pprofile.NewProfiles()
	x := &dictionary{d: profiles.Dictionary(), strings: map[string]int32{}}
	x.str("")
	x.d.MappingTable().AppendEmpty()
	m := x.d.MappingTable().AppendEmpty()
	m.SetMemoryStart(0x400000)
	m.SetMemoryLimit(0x800000)
	m.SetFilenameStrindex(x.str("/usr/bin/checkout"))
	x.d.LocationTable().AppendEmpty()
	x.d.FunctionTable().AppendEmpty()
	x.d.StackTable().AppendEmpty()
	x.d.AttributeTable().AppendEmpty()
	x.d.LinkTable().AppendEmpty()
	link := x.d.LinkTable().AppendEmpty()
	link.SetTraceID(pcommon.TraceID{0x5b, 0x8e, 0xff, 0xf7, 0x98, 0x03, 0x81, 0x03, 0xd2, 0x69, 0xb6, 0x33, 0x81, 0x3f, 0xc6, 0x0c})
	link.SetSpanID(pcommon.SpanID{0xee, 0xe1, 0x9b, 0x7e, 0xc3, 0xc1, 0xb1, 0x74})

	main := x.location("main", "main.go", 12, 0x401000)
	handle := x.location("handle", "handler.go", 40, 0x402000)
	parse := x.location("parse", "parse.go", 77, 0x403000)
	compress := x.location("compress", "gzip.go", 9, 0x404000)
	parseStack := x.stack(parse, handle, main)
	compressStack := x.stack(compress, handle, main)
	mainStack := x.stack(main)
	worker := x.attribute("thread.name", "worker-1", "")
	profileAttr := x.attribute("profile.origin", "interop", "")

	rp := profiles.ResourceProfiles().AppendEmpty()
	rp.Resource().Attributes().PutStr("service.name", service)
	rp.Resource().Attributes().PutStr("deployment.environment", "test")
	sp := rp.ScopeProfiles().AppendEmpty()
	sp.Scope().SetName("profiles-producer")
	sp.Scope().SetVersion("1.0.0")

	cpu := sp.Profiles().AppendEmpty()
	cpu.SetProfileID(pprofile.ProfileID{0x0a, 0x0b, 0x0c, 0x0d, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	cpu.SampleType().SetTypeStrindex(x.str("cpu"))
	cpu.SampleType().SetUnitStrindex(x.str("nanoseconds"))
	cpu.PeriodType().SetTypeStrindex(x.str("cpu"))
	cpu.PeriodType().SetUnitStrindex(x.str("nanoseconds"))
	cpu.SetPeriod(10_000_000)
	cpu.SetTime(pcommon.Timestamp(Start))
	cpu.SetDurationNano(uint64(10 * time.Second))
	cpu.AttributeIndices().Append(profileAttr)
	sample(cpu, parseStack, 1, []int32{worker}, 10_000_000, 20_000_000)
	sample(cpu, compressStack, 0, nil, 30_000_000)
	sample(cpu, mainStack, 0, nil, 10_000_000)
	sample(cpu, parseStack, 0, nil, 40_000_000)

	alloc := sp.Profiles().AppendEmpty()
	alloc.SetProfileID(pprofile.ProfileID{0x0a, 0x0b, 0x0c, 0x0e, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	alloc.SampleType().SetTypeStrindex(x.str("alloc_space"))
	alloc.SampleType().SetUnitStrindex(x.str("bytes"))
	alloc.SetTime(pcommon.Timestamp(Start))
	alloc.SetDurationNano(uint64(10 * time.Second))
	alloc.SetOriginalPayloadFormat("pprof")
	alloc.OriginalPayload().FromRaw([]byte{0x1f, 0x8b, 0x08, 0x00})
	sample(alloc, parseStack, 0, nil, 4096)
	sample(alloc, compressStack, 0, []int32{worker}, 1024)
	return profiles
}

type result struct {
	Status   int    `json:"status"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message,omitempty"`
	Rejected int64  `json:"rejected"`
}

func sendGRPC(target string, request pprofileotlp.ExportRequest) result {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return result{Status: -1, Message: err.Error()}
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	response, err := pprofileotlp.NewGRPCClient(conn).Export(ctx, request)
	if err != nil {
		s := status.Convert(err)
		return result{Status: int(s.Code()), Code: s.Code().String(), Message: s.Message()}
	}
	return result{Rejected: response.PartialSuccess().RejectedProfiles(), Message: response.PartialSuccess().ErrorMessage()}
}

func sendHTTP(target, contentType, version string, body []byte) result {
	req, err := http.NewRequest(http.MethodPost, "http://"+target+"/v1development/profiles", bytes.NewReader(body))
	if err != nil {
		return result{Status: -1, Message: err.Error()}
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("OTLP-Profiles-Development-Version", version)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return result{Status: -1, Message: err.Error()}
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	out := result{Status: res.StatusCode}
	if res.StatusCode != http.StatusOK {
		out.Message = string(answer)
		return out
	}
	response := pprofileotlp.NewExportResponse()
	if contentType == "application/json" {
		err = response.UnmarshalJSON(answer)
	} else {
		err = response.UnmarshalProto(answer)
	}
	if err != nil {
		out.Message = err.Error()
		return out
	}
	out.Rejected = response.PartialSuccess().RejectedProfiles()
	out.Message = response.PartialSuccess().ErrorMessage()
	return out
}

// load sends one request body `requests` times over HTTP protobuf from `workers` goroutines.
func load(target string, requests, workers int) {
	body, err := pprofileotlp.NewExportRequestFromProfiles(build("profiles-load")).MarshalProto()
	if err != nil {
		panic(err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	next := make(chan struct{}, requests)
	for i := 0; i < requests; i++ {
		next <- struct{}{}
	}
	close(next)
	failed := 0
	var mu sync.Mutex
	var wg sync.WaitGroup
	started := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range next {
				res, err := client.Post("http://"+target+"/v1development/profiles", "application/x-protobuf", bytes.NewReader(body))
				if err == nil {
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
				if err != nil || res.StatusCode != http.StatusOK {
					mu.Lock()
					failed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	line, _ := json.Marshal(map[string]any{"requests": requests, "failed": failed, "bytes": len(body), "seconds": time.Since(started).Seconds()})
	fmt.Println(string(line))
}

func main() {
	if len(os.Args) == 5 && os.Args[1] == "load" {
		requests, _ := strconv.Atoi(os.Args[3])
		workers, _ := strconv.Atoi(os.Args[4])
		load(os.Args[2], requests, workers)
		return
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: profiles-producer grpc|http-proto|http-json <host:port> <service> [version] | proto|json <service>")
		os.Exit(2)
	}
	mode := os.Args[1]
	if mode == "proto" || mode == "json" {
		request := pprofileotlp.NewExportRequestFromProfiles(build(os.Args[2]))
		var body []byte
		var err error
		if mode == "proto" {
			body, err = request.MarshalProto()
		} else {
			body, err = request.MarshalJSON()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(body)
		return
	}
	target, service, version := os.Args[2], os.Args[3], pprofileotlp.DevelopmentVersion
	if len(os.Args) > 4 {
		version = os.Args[4]
	}
	request := pprofileotlp.NewExportRequestFromProfiles(build(service))
	var out result
	switch mode {
	case "grpc":
		out = sendGRPC(target, request)
	case "http-proto":
		body, err := request.MarshalProto()
		if err != nil {
			panic(err)
		}
		out = sendHTTP(target, "application/x-protobuf", version, body)
	case "http-json":
		body, err := request.MarshalJSON()
		if err != nil {
			panic(err)
		}
		out = sendHTTP(target, "application/json", version, body)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode "+mode)
		os.Exit(2)
	}
	line, _ := json.Marshal(out)
	fmt.Println(string(line))
}
