package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/a2agate/gateway/auth"
	"github.com/a2agate/gateway/proxy"
	"github.com/a2agate/gateway/telemetry"
)

// validateFile is `gateway validate`: the config file loaded as start
// loads it, then every secret it names read as start reads it (checkSecrets),
// so that a config validate passes does not fail at start for a file or
// variable it names.
func validateFile(path string) error {
	cfg, err := loadConfig(path)
	if err != nil {
		return err
	}
	if err := checkSecrets(context.Background(), cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// checkSecrets reads every secret cfg names, with the code serve and build
// read them with, and reports every problem at once: the trace collector's
// headers, the traffic listener's and each grpc_tls's certificate and key,
// the task index's passwords and TLS files, and each agent's JWT keys and
// HMAC secret. It listens on nothing and sends nothing: the task index is
// opened and closed without a command, and no JWKS is fetched (start does
// not need one either).
func checkSecrets(ctx context.Context, cfg *Config) error {
	var errs []error
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if tracing, err := telemetry.Setup(ctx, cfg.Tracing, quiet); err != nil {
		errs = append(errs, err)
	} else {
		_ = tracing.Shutdown(ctx)
	}
	if _, err := loadListenerTLS(cfg); err != nil {
		errs = append(errs, err)
	}
	if tasks, err := openStore(cfg.Store); err != nil {
		errs = append(errs, err)
	} else {
		_ = tasks.Close()
	}
	noFetch := &http.Client{Transport: refusingTransport{}}
	for _, ac := range cfg.Agents {
		if ac.Auth == nil {
			continue
		}
		v, err := newVerifier(ctx, ac, noFetch)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		v.Close()
	}
	return errors.Join(errs...)
}

// refusingTransport fails every request: validate's verifiers fetch no
// JWKS, which a verifier tolerates at start (tokens needing it wait for it).
type refusingTransport struct{}

func (refusingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("gateway validate fetches no key set")
}

// jwksClient fetches a running agent's JWKS.
var jwksClient = &http.Client{Timeout: 10 * time.Second}

// newVerifier is the token verifier of agent ac, reading its keys and
// secret; client fetches its JWKS.
func newVerifier(ctx context.Context, ac proxy.AgentConfig, client *http.Client) (*auth.Verifier, error) {
	v, err := auth.New(ctx, *ac.Auth, ac.PublicURL, client)
	if err != nil {
		return nil, fmt.Errorf("agent %q auth: %w", ac.Name, err)
	}
	return v, nil
}
