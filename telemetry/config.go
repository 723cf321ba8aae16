package telemetry

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/a2agate/gateway/internal/staticheader"
)

// Protocols of the OTLP exporter.
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// Compressions of the OTLP export. None is the default, as the OTLP
// exporters have it: gzip adds about a tenth to a traced call's CPU
// (bench/README.md), which pays only when the link to the collector is slow
// or metered, not for a collector on the same host or pod.
const (
	CompressionNone = "none"
	CompressionGzip = "gzip"
)

// DefaultServiceName names the gateway in its traces when neither the config
// nor OTEL_SERVICE_NAME does.
const DefaultServiceName = "a2a-gateway"

// Config is the tracing section of the gateway's config.
//
// What the config sets wins over the OpenTelemetry environment variables, as
// the OpenTelemetry specification has programmatic configuration override
// the environment; what it leaves unset falls back to them, then to the
// defaults below. Tracing itself is on only when Enabled is set: the
// variables tune the export, they do not turn it on.
type Config struct {
	// Enabled exports spans over OTLP. Off by default; with it off the
	// gateway still passes the caller's trace context on to the backend.
	Enabled bool `yaml:"enabled"`
	// OTLP is where spans go.
	OTLP OTLPConfig `yaml:"otlp"`
	// SampleRatio is the share of new traces recorded, from 0 to 1. A call
	// that arrives with a trace context follows its caller's sampling
	// decision. Unset: OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG,
	// else 1 (every trace).
	SampleRatio *float64 `yaml:"sample_ratio"`
	// ServiceName is the service.name of the gateway's spans. Defaults to
	// OTEL_SERVICE_NAME, else the service.name of OTEL_RESOURCE_ATTRIBUTES,
	// else "a2a-gateway".
	ServiceName string `yaml:"service_name"`

	// Tests shrink the export's bounds; the constants of setup.go otherwise.
	queueSize     int
	exportTimeout time.Duration
}

// OTLPConfig is the OTLP collector spans are exported to.
type OTLPConfig struct {
	// Endpoint is the collector: a URL (http://collector:4318; the scheme
	// chooses plain text or TLS; for http/protobuf a URL without a path gets
	// /v1/traces) or host:port (TLS unless Insecure). Defaults to
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT,
	// else localhost:4318 (http/protobuf) or localhost:4317 (grpc).
	Endpoint string `yaml:"endpoint"`
	// Protocol is http/protobuf or grpc. Defaults to
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL,
	// else http/protobuf.
	Protocol string `yaml:"protocol"`
	// Compression is none or gzip. Defaults to
	// OTEL_EXPORTER_OTLP_TRACES_COMPRESSION, else
	// OTEL_EXPORTER_OTLP_COMPRESSION, else none.
	Compression string `yaml:"compression"`
	// Insecure sends spans in plain text to a host:port endpoint, for a
	// collector on the same host or pod. Unset: OTEL_EXPORTER_OTLP_INSECURE.
	Insecure bool `yaml:"insecure"`
	// Headers are sent with every export, e.g. a collector's API key. When
	// any is set they replace OTEL_EXPORTER_OTLP_HEADERS.
	Headers []HeaderConfig `yaml:"headers"`
}

// HeaderConfig is one header sent to the collector.
type HeaderConfig = staticheader.Config

// SetDefaults fills the unset fields from the environment, then with their
// defaults.
func (c *Config) SetDefaults() {
	c.OTLP.Protocol = cmp.Or(c.OTLP.Protocol, firstEnv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"), ProtocolHTTP)
	c.OTLP.Compression = cmp.Or(c.OTLP.Compression, firstEnv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"), CompressionNone)
	c.ServiceName = cmp.Or(c.ServiceName, firstEnv("OTEL_SERVICE_NAME"), serviceNameFromResourceEnv(), DefaultServiceName)
}

// Validate reports every problem of c, joined. Call it after SetDefaults.
// It does not read the header values; Setup does.
func (c *Config) Validate() error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	switch c.OTLP.Protocol {
	case ProtocolHTTP, ProtocolGRPC:
	default:
		bad("otlp.protocol: %q is not one of %s, %s (set here or by OTEL_EXPORTER_OTLP_PROTOCOL)", c.OTLP.Protocol, ProtocolHTTP, ProtocolGRPC)
	}
	switch c.OTLP.Compression {
	case CompressionNone, CompressionGzip:
	default:
		bad("otlp.compression: %q is not one of %s, %s (set here or by OTEL_EXPORTER_OTLP_COMPRESSION)", c.OTLP.Compression, CompressionNone, CompressionGzip)
	}
	if c.OTLP.Endpoint != "" {
		if err := checkEndpoint(c.OTLP.Endpoint, c.OTLP.Insecure); err != nil {
			bad("otlp.endpoint: %w", err)
		}
	}
	for i, h := range c.OTLP.Headers {
		if err := h.Validate(fmt.Sprintf("otlp.headers[%d]", i)); err != nil {
			problems = append(problems, err)
		}
	}
	if r := c.SampleRatio; r != nil && !(*r >= 0 && *r <= 1) {
		bad("sample_ratio: must be from 0 to 1, got %v", *r)
	}
	if c.ServiceName == "" {
		bad("service_name: must not be empty")
	}
	return errors.Join(problems...)
}

func checkEndpoint(endpoint string, insecure bool) error {
	if !isURL(endpoint) {
		if _, port, err := net.SplitHostPort(endpoint); err != nil || port == "" {
			return fmt.Errorf("want a URL (http://collector:4318) or host:port, got %q", endpoint)
		}
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q is not http or https", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("%q has no host", endpoint)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return errors.New("must not carry credentials, a query or a fragment: send credentials in otlp.headers")
	case insecure && u.Scheme == "https":
		return errors.New("insecure is set but the URL is https: use an http:// URL for plain text")
	}
	return nil
}

// headers reads the header values.
func (c *OTLPConfig) headers() (map[string]string, error) {
	if len(c.Headers) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(c.Headers))
	for _, h := range c.Headers {
		v, err := h.Value()
		if err != nil {
			return nil, fmt.Errorf("otlp %w", err)
		}
		m[h.Name] = v
	}
	return m, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(os.Getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// serviceNameFromResourceEnv is the service.name OTEL_RESOURCE_ATTRIBUTES
// (key=value pairs, comma-separated, values percent-encoded) holds, if any.
func serviceNameFromResourceEnv() string {
	for _, pair := range strings.Split(os.Getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(k) != "service.name" {
			continue
		}
		if name, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			return name
		}
	}
	return ""
}
