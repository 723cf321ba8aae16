package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
)

// loadPEMKeys reads every public key in the PEM file at path.
func loadPEMKeys(path string) (keySet, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	set, err := parsePEMKeys(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return set, nil
}

// parsePEMKeys accepts "PUBLIC KEY" (PKIX), "RSA PUBLIC KEY" (PKCS #1) and
// "CERTIFICATE" blocks. Private keys are refused rather than reduced to their
// public half: a private key in the gateway's configuration is a leak to fix.
func parsePEMKeys(data []byte) (keySet, error) {
	var set keySet
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			break
		}
		pub, err := parsePEMBlock(block)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", n, err)
		}
		key, err := staticPublicKey(pub)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d: %w", n, err)
		}
		set = append(set, key)
	}
	if len(set) == 0 {
		return nil, errors.New("no PEM public key found")
	}
	return set, nil
}

func parsePEMBlock(block *pem.Block) (any, error) {
	switch block.Type {
	case "PUBLIC KEY":
		return x509.ParsePKIXPublicKey(block.Bytes)
	case "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	case "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		return cert.PublicKey, nil
	}
	if strings.Contains(block.Type, "PRIVATE KEY") {
		return nil, fmt.Errorf("%s found: give the public key only", block.Type)
	}
	return nil, fmt.Errorf("unsupported block type %q", block.Type)
}

// staticPublicKey wraps a parsed public key, enforcing the same limits as
// JWKS keys.
func staticPublicKey(pub any) (verificationKey, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		if err := checkRSASize(k); err != nil {
			return verificationKey{}, err
		}
		return verificationKey{family: familyRSA, key: k}, nil
	case *ecdsa.PublicKey:
		switch k.Curve.Params().Name {
		case "P-256", "P-384", "P-521":
			return verificationKey{family: familyEC, key: k}, nil
		}
		return verificationKey{}, fmt.Errorf("unsupported ECDSA curve %s", k.Curve.Params().Name)
	case ed25519.PublicKey:
		return verificationKey{family: familyEd25519, key: k}, nil
	default:
		return verificationKey{}, fmt.Errorf("unsupported public key type %T", pub)
	}
}
