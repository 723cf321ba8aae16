package telemetry

import (
	"math"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/testfiles"
)

func TestDefaults(t *testing.T) {
	var c Config
	c.SetDefaults()
	if c.Enabled || c.OTLP.Protocol != ProtocolHTTP || c.OTLP.Compression != CompressionNone || c.ServiceName != DefaultServiceName || c.SampleRatio != nil {
		t.Errorf("defaults: %+v", c)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod,service.name=from%20resource")
	c = Config{}
	c.SetDefaults()
	if c.ServiceName != "from resource" {
		t.Errorf("service name %q, want the one of OTEL_RESOURCE_ATTRIBUTES", c.ServiceName)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_SERVICE_NAME", "svc")
	c = Config{}
	c.SetDefaults()
	if c.OTLP.Protocol != ProtocolGRPC || c.ServiceName != "svc" {
		t.Errorf("defaults from the environment: %+v", c)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
	c = Config{}
	c.SetDefaults()
	if c.OTLP.Protocol != ProtocolHTTP {
		t.Errorf("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL does not win over OTEL_EXPORTER_OTLP_PROTOCOL: %q", c.OTLP.Protocol)
	}
}

func TestValidate(t *testing.T) {
	ratio := func(r float64) *float64 { return &r }
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" for valid
	}{
		{"url endpoint", func(c *Config) { c.OTLP.Endpoint = "http://collector:4318" }, ""},
		{"url endpoint with path", func(c *Config) { c.OTLP.Endpoint = "https://collector/otlp/v1/traces" }, ""},
		{"host:port endpoint", func(c *Config) { c.OTLP.Endpoint, c.OTLP.Insecure = "collector:4317", true }, ""},
		{"ratio bounds", func(c *Config) { c.SampleRatio = ratio(0) }, ""},
		{"ratio one", func(c *Config) { c.SampleRatio = ratio(1) }, ""},
		{"json protocol", func(c *Config) { c.OTLP.Protocol = "http/json" }, `otlp.protocol: "http/json" is not one of http/protobuf, grpc`},
		{"gzip", func(c *Config) { c.OTLP.Compression = "gzip" }, ""},
		{"zstd", func(c *Config) { c.OTLP.Compression = "zstd" }, `otlp.compression: "zstd" is not one of none, gzip`},
		{"bare host", func(c *Config) { c.OTLP.Endpoint = "collector" }, "otlp.endpoint: want a URL"},
		{"ftp", func(c *Config) { c.OTLP.Endpoint = "ftp://collector:21" }, `scheme "ftp" is not http or https`},
		{"no host", func(c *Config) { c.OTLP.Endpoint = "http:///v1/traces" }, "has no host"},
		{"credentials in URL", func(c *Config) { c.OTLP.Endpoint = "https://user:secret@collector" }, "send credentials in otlp.headers"},
		{"insecure https", func(c *Config) { c.OTLP.Endpoint, c.OTLP.Insecure = "https://collector", true }, "insecure is set but the URL is https"},
		{"header without name", func(c *Config) { c.OTLP.Headers = []HeaderConfig{{ValueEnv: "K"}} }, "otlp.headers[0]: name is required"},
		{"header name with a space", func(c *Config) { c.OTLP.Headers = []HeaderConfig{{Name: "X Key", ValueEnv: "K"}} }, `otlp.headers[0]: name "X Key" is not an HTTP header name`},
		{"header both sources", func(c *Config) { c.OTLP.Headers = []HeaderConfig{{Name: "K", ValueEnv: "K", ValueFile: "/k"}} }, "set exactly one of value_file and value_env"},
		{"header no source", func(c *Config) { c.OTLP.Headers = []HeaderConfig{{Name: "K"}} }, "set exactly one of value_file and value_env"},
		{"ratio above 1", func(c *Config) { c.SampleRatio = ratio(1.5) }, "sample_ratio: must be from 0 to 1, got 1.5"},
		{"ratio negative", func(c *Config) { c.SampleRatio = ratio(-0.1) }, "sample_ratio: must be from 0 to 1"},
		{"ratio NaN", func(c *Config) { c.SampleRatio = ratio(math.NaN()) }, "sample_ratio: must be from 0 to 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Enabled: true}
			c.SetDefaults()
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestHeaderValues(t *testing.T) {
	file := testfiles.Write(t, "key", []byte("from-file\n"))
	t.Setenv("GW_TEST_TOKEN", "from-env")
	c := OTLPConfig{Headers: []HeaderConfig{{Name: "X-Key", ValueFile: file}, {Name: "Authorization", ValueEnv: "GW_TEST_TOKEN"}}}
	got, err := c.headers()
	if err != nil || got["X-Key"] != "from-file" || got["Authorization"] != "from-env" {
		t.Fatalf("headers: %v, %v", got, err)
	}
	for _, h := range []HeaderConfig{{Name: "X-Key", ValueEnv: "GW_TEST_UNSET_VARIABLE"}, {Name: "X-Key", ValueFile: file + ".missing"}} {
		cfg := Config{Enabled: true, OTLP: OTLPConfig{Headers: []HeaderConfig{h}}}
		cfg.SetDefaults()
		if _, err := Setup(testCtx(t), cfg, quietLog()); err == nil || !strings.Contains(err.Error(), "otlp header X-Key") {
			t.Errorf("Setup with header %+v: %v, want an error naming the header", h, err)
		}
	}
}
