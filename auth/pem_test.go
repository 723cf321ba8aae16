package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"strings"
	"testing"

	"github.com/a2agate/gateway/internal/testfiles"
)

func TestParsePEMKeys(t *testing.T) {
	t.Parallel()
	rsaPub := &rsaPrimary().PublicKey
	ec := newECKey(t, elliptic.P384())
	ed := newEdKey(t)
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PUBLIC KEY", Bytes: x509.MarshalPKCS1PublicKey(rsaPub)})
	data := []byte("comment lines before the first block are ignored\n")
	data = append(data, pkcs1...)
	data = append(data, selfSignedCert(t, ec)...)
	data = append(data, pemPublicKey(t, ed.Public())...)

	set, err := parsePEMKeys(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 3 {
		t.Fatalf("parsed %d keys, want 3", len(set))
	}
	if !set[0].key.(*rsa.PublicKey).Equal(rsaPub) || set[0].family != familyRSA {
		t.Errorf("key 0 = %+v, want the RSA key", set[0])
	}
	if !set[1].key.(*ecdsa.PublicKey).Equal(ec.Public()) || set[1].family != familyEC {
		t.Errorf("key 1 = %+v, want the certificate's EC key", set[1])
	}
	if !set[2].key.(ed25519.PublicKey).Equal(ed.Public()) || set[2].family != familyEd25519 {
		t.Errorf("key 2 = %+v, want the Ed25519 key", set[2])
	}
}

func TestParsePEMKeysRejects(t *testing.T) {
	t.Parallel()
	ec := newECKey(t, elliptic.P256())
	ecDER, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p224 := newECKey(t, elliptic.P224())
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "no PEM public key found"},
		{"not PEM", []byte("ssh-ed25519 AAAA"), "no PEM public key found"},
		{"private key", pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER}), "EC PRIVATE KEY found: give the public key only"},
		{"unknown block", pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: []byte{1}}), `unsupported block type "X509 CRL"`},
		{"garbage DER", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}), "PEM block 1"},
		{"short RSA", pemPublicKey(t, small.Public()), "RSA key is 1024 bits"},
		{"P-224", pemPublicKey(t, p224.Public()), "unsupported ECDSA curve P-224"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parsePEMKeys(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("parsePEMKeys = %v, want error containing %q", err, tt.want)
			}
		})
	}
}

func TestNewReportsEveryKeyProblem(t *testing.T) {
	t.Parallel()
	ec := newECKey(t, elliptic.P256())
	cfg := Config{
		Issuer:     testIssuer,
		Algorithms: []string{"ES256", "HS256"},
		PublicKeyFiles: []string{
			"/nonexistent/key.pem",
			testfiles.Write(t, "junk.pem", []byte("junk")),
			testfiles.Write(t, "ec.pem", pemPublicKey(t, ec.Public())),
		},
		HMACSecretFile: testfiles.Write(t, "short", []byte("short")),
	}
	_, err := New(context.Background(), cfg, testAudience, nil)
	if err == nil {
		t.Fatal("New accepted unreadable keys")
	}
	for _, want := range []string{"auth.public_key_files[0]", "auth.public_key_files[1]", "HS256 needs at least 32"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("New error lacks %q; got:\n%v", want, err)
		}
	}
}

func TestNewRequiresAPEMKeyPerAlgorithm(t *testing.T) {
	t.Parallel()
	cfg := Config{Issuer: testIssuer, Algorithms: []string{"ES256", "ES384", "EdDSA"},
		PublicKeyFiles: []string{testfiles.Write(t, "ec.pem", pemPublicKey(t, newECKey(t, elliptic.P256()).Public()))}}
	_, err := New(context.Background(), cfg, testAudience, nil)
	if err == nil || !strings.Contains(err.Error(), "verify ES384") || !strings.Contains(err.Error(), "verify EdDSA") ||
		strings.Contains(err.Error(), "verify ES256") {
		t.Fatalf("New = %v, want errors for ES384 and EdDSA only", err)
	}
}
