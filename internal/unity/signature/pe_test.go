package signature_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tinyPE returns a minimal valid PE32+ console image: headers and one .text
// section holding a ret. It is built here so no binary is committed.
func tinyPE() []byte {
	var b bytes.Buffer
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	dos := make([]byte, 0x40)
	copy(dos, "MZ")
	binary.LittleEndian.PutUint32(dos[0x3c:], 0x40)
	b.Write(dos)
	b.WriteString("PE\x00\x00")
	// COFF header: AMD64, one section, 240-byte optional header, executable.
	w(uint16(0x8664))
	w(uint16(1))
	w(uint32(0))
	w(uint32(0))
	w(uint32(0))
	w(uint16(240))
	w(uint16(0x0022))
	// Optional header, PE32+.
	w(uint16(0x20b))
	w([2]uint8{14, 0})
	w(uint32(0x200)) // SizeOfCode
	w(uint32(0))
	w(uint32(0))
	w(uint32(0x1000)) // AddressOfEntryPoint
	w(uint32(0x1000)) // BaseOfCode
	w(uint64(0x140000000))
	w(uint32(0x1000)) // SectionAlignment
	w(uint32(0x200))  // FileAlignment
	w([6]uint16{6, 0, 0, 0, 6, 0})
	w(uint32(0))      // Win32VersionValue
	w(uint32(0x2000)) // SizeOfImage
	w(uint32(0x200))  // SizeOfHeaders
	w(uint32(0))      // CheckSum
	w(uint16(3))      // console
	w(uint16(0x8160))
	w([4]uint64{0x100000, 0x1000, 0x100000, 0x1000})
	w(uint32(0))
	w(uint32(16))
	w([32]uint32{})
	// Section header.
	b.WriteString(".text\x00\x00\x00")
	w(uint32(0x10))
	w(uint32(0x1000))
	w(uint32(0x200))
	w(uint32(0x200))
	w([3]uint32{})
	w(uint32(0x60000020))
	b.Write(make([]byte, 0x200-b.Len()))
	text := make([]byte, 0x200)
	text[0] = 0xc3
	b.Write(text)
	return b.Bytes()
}

// pki is a throwaway CA with leaves made by the test.
type pki struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	dir    string
	serial int64
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Throwaway Test Root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &pki{caCert: ca, caKey: key, dir: t.TempDir(), serial: 1}
}

// signer writes a leaf (with the given EKUs) and its key; it returns the
// certificate chain and key file paths and the parsed leaf.
func (p *pki) signer(t *testing.T, name string, eku []x509.ExtKeyUsage) (string, string, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name, Organization: []string{"Throwaway"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: eku,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	chain := filepath.Join(p.dir, name+".pem")
	var pems []byte
	pems = append(pems, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	pems = append(pems, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.caCert.Raw})...)
	require.NoError(t, os.WriteFile(chain, pems, 0o600))
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	require.NoError(t, err)
	keyPath := filepath.Join(p.dir, name+".key")
	require.NoError(t, os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}), 0o600))
	return chain, keyPath, leaf
}

// osslsigncode returns the path of the real Authenticode signer. It is
// installed on this project's development and CI machines; elsewhere the
// signature tests skip (and fail when CI is set).
func osslsigncode(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("osslsigncode")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("osslsigncode is required in CI (apt-get install osslsigncode)")
		}
		t.Skip("osslsigncode not installed")
	}
	return p
}

// sign signs in with osslsigncode (SHA-256, no timestamp) and returns the
// signed image's path.
func sign(t *testing.T, tool, chain, key string, image []byte) string {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.exe"), filepath.Join(dir, "Unity.exe")
	require.NoError(t, os.WriteFile(in, image, 0o600))
	cmd := exec.Command(tool, "sign", "-certs", chain, "-key", key, "-h", "sha256", "-n", "Unity", "-in", in, "-out", out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}
