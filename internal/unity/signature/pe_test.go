package signature_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/sassoftware/relic/v8/lib/pkcs7"
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

// leaf is a signing certificate of the throwaway CA, with its key in
// memory and on disk (PEM chain and PKCS#8 key, for osslsigncode).
type leaf struct {
	cert, ca       *x509.Certificate
	key            *ecdsa.PrivateKey
	chain, keyFile string
}

// leaf makes a leaf with the given EKUs.
func (p *pki) leaf(t *testing.T, name string, eku []x509.ExtKeyUsage) leaf {
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
	cert, err := x509.ParseCertificate(der)
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
	return leaf{cert: cert, ca: p.caCert, key: key, chain: chain, keyFile: keyPath}
}

// signer signs a PE image with a leaf (its chain and key) and returns the
// signed image's path.
type signer struct {
	name string
	sign func(t *testing.T, l leaf, image []byte) string
}

// signers are the Authenticode signers the tests run with: osslsigncode
// (the real, independent signer, installed on this project's development
// and CI machines) when present, and always an in-test Go signer built on
// relic's PKCS#7 builder, so the refusal matrix never silently skips.
func signers(t *testing.T) []signer {
	out := []signer{{"go", goSign}}
	if p, err := exec.LookPath("osslsigncode"); err == nil {
		out = append(out, signer{"osslsigncode", func(t *testing.T, l leaf, image []byte) string { return osslSign(t, p, l, image) }})
	} else {
		t.Log("osslsigncode not installed: only the in-test Go signer runs (apt-get install osslsigncode)")
	}
	return out
}

// osslSign signs image with osslsigncode (SHA-256, no timestamp).
func osslSign(t *testing.T, tool string, l leaf, image []byte) string {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.exe"), filepath.Join(dir, "Unity.exe")
	require.NoError(t, os.WriteFile(in, image, 0o600))
	cmd := exec.Command(tool, "sign", "-certs", l.chain, "-key", l.keyFile, "-h", "sha256", "-n", "Unity", "-in", in, "-out", out)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// goSign appends an Authenticode signature to a PE32+ image the way a
// signer does: pad to 8 bytes, digest everything but the checksum and the
// certificate-table entry, sign SpcIndirectDataContent, append the
// WIN_CERTIFICATE and point the directory entry at it.
func goSign(t *testing.T, l leaf, image []byte) string {
	t.Helper()
	img := append([]byte(nil), image...)
	for len(img)%8 != 0 {
		img = append(img, 0)
	}
	opt := int(binary.LittleEndian.Uint32(img[0x3c:])) + 24
	cks, dir := opt+64, opt+144
	h := sha256.New()
	h.Write(img[:cks])
	h.Write(img[cks+4 : dir])
	h.Write(img[dir+8:])
	var indirect struct {
		Data struct {
			Type  asn1.ObjectIdentifier
			Value asn1.RawValue
		}
		MessageDigest struct {
			DigestAlgorithm pkix.AlgorithmIdentifier
			Digest          []byte
		}
	}
	indirect.Data.Type = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 1, 15} // SPC_PE_IMAGE_DATAOBJ
	// SpcPeImageData{flags: empty BIT STRING, file: [0] SpcLink{file: [2] SpcString{unicode: [0] ""}}}
	indirect.Data.Value = asn1.RawValue{FullBytes: []byte{0x30, 0x09, 0x03, 0x01, 0x00, 0xa0, 0x04, 0xa2, 0x02, 0x80, 0x00}}
	indirect.MessageDigest.DigestAlgorithm = pkix.AlgorithmIdentifier{Algorithm: asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}, Parameters: asn1.NullRawValue}
	indirect.MessageDigest.Digest = h.Sum(nil)
	sb := pkcs7.NewBuilder(l.key, []*x509.Certificate{l.cert, l.ca}, crypto.SHA256)
	require.NoError(t, sb.SetContent(asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 1, 4}, indirect))
	psd, err := sb.Sign()
	require.NoError(t, err)
	der, err := psd.Marshal()
	require.NoError(t, err)
	entry := make([]byte, 8, 8+len(der)+8)
	binary.LittleEndian.PutUint32(entry[0:], uint32(8+len(der)))
	binary.LittleEndian.PutUint16(entry[4:], 0x0200)
	binary.LittleEndian.PutUint16(entry[6:], 0x0002)
	entry = append(entry, der...)
	for len(entry)%8 != 0 {
		entry = append(entry, 0)
	}
	binary.LittleEndian.PutUint32(img[dir:], uint32(len(img)))
	binary.LittleEndian.PutUint32(img[dir+4:], uint32(len(entry)))
	out := filepath.Join(t.TempDir(), "Unity.exe")
	require.NoError(t, os.WriteFile(out, append(img, entry...), 0o600))
	return out
}
