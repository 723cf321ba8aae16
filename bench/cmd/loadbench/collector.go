package main

import (
	"io"
	"net"
	"net/http"
	"sync"
)

// collector is the OTLP/HTTP collector of the tracing case: it reads each
// export and discards it, answering as a collector that took it all. It
// runs in the load generator's process, started on first use; what the
// case measures is the gateway's cost of recording and exporting spans.
type collector struct {
	once sync.Once
	url  string
	err  error
}

// emptyExportResponse is an ExportTraceServiceResponse with nothing
// rejected: no fields, no bytes.
var emptyExportResponse []byte

func (b *bench) collectorURL() (string, error) {
	c := &b.collector
	c.once.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			c.err = err
			return
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(emptyExportResponse)
		})}
		go func() { _ = srv.Serve(ln) }()
		c.url = "http://" + ln.Addr().String()
	})
	return c.url, c.err
}
