package auth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
)

// loadHMACSecret reads the secret named by cfg, or returns nil when none is
// configured. Trailing line breaks are dropped because editors and
// `echo secret > file` add them and they are never meant as key material.
func loadHMACSecret(cfg Config) ([]byte, error) {
	var secret []byte
	switch {
	case cfg.HMACSecretFile != "":
		b, err := os.ReadFile(cfg.HMACSecretFile)
		if err != nil {
			return nil, fmt.Errorf("auth.hmac_secret_file: %w", err)
		}
		secret = b
	case cfg.HMACSecretEnv != "":
		secret = []byte(os.Getenv(cfg.HMACSecretEnv))
	default:
		return nil, nil
	}
	secret = bytes.TrimRight(secret, "\r\n")
	if len(secret) == 0 {
		if cfg.HMACSecretFile != "" {
			return nil, errors.New("auth.hmac_secret_file: file is empty")
		}
		return nil, fmt.Errorf("auth.hmac_secret_env: environment variable %s is unset or empty", cfg.HMACSecretEnv)
	}
	return secret, nil
}

// checkHMACSecretLength enforces RFC 7518 §3.2: the key must be at least as
// long as the hash output of every HS* algorithm allowed.
func checkHMACSecretLength(secret []byte, algs []string) error {
	var errs []error
	for _, name := range algs {
		alg, ok := lookupAlgorithm(name)
		if ok && alg.family == familyHMAC && len(secret) < alg.minHMACKeyBytes {
			errs = append(errs, fmt.Errorf("auth: HMAC secret is %d bytes; %s needs at least %d", len(secret), alg.name, alg.minHMACKeyBytes))
		}
	}
	return errors.Join(errs...)
}
