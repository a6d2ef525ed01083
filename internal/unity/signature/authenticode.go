package signature

import (
	"crypto"
	"crypto/hmac"
	"crypto/x509"
	"crypto/x509/pkix"
	"debug/pe"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"io"

	"github.com/sassoftware/relic/v8/lib/pkcs7"
	"github.com/sassoftware/relic/v8/lib/x509tools"
)

// MaxSignatureBytes bounds the PE certificate table (Unity's is a few KiB).
const MaxSignatureBytes = 1 << 20

// WIN_CERTIFICATE of an Authenticode signature
// (https://learn.microsoft.com/windows/win32/debug/pe-format#the-attribute-certificate-table-image-only).
const (
	winCertRevision2       = 0x0200
	winCertTypePKCSSigned  = 0x0002
	winCertHeaderSize      = 8
	optionalHeaderOffset   = 24 // from the PE signature: "PE\0\0" and the COFF header
	checksumOffsetInOpt    = 64
	certDirOffsetInOpt32   = 128
	certDirOffsetInOpt32Pl = 144
)

// oidSpcIndirectDataContent is the content type of an Authenticode
// SignedData (SPC_INDIRECT_DATA_OBJID).
var oidSpcIndirectDataContent = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 311, 2, 1, 4}

// spcIndirectDataContent is the signed content: what was signed (data) and
// the digest of the image (messageDigest).
type spcIndirectDataContent struct {
	Data          asn1.RawValue
	MessageDigest struct {
		DigestAlgorithm pkix.AlgorithmIdentifier
		Digest          []byte
	}
}

// peLayout locates what the Authenticode image digest leaves out.
type peLayout struct {
	size, checksumOff, certDirOff, certStart, certSize int64
}

// parseLayout reads the PE headers with debug/pe and locates the checksum,
// the certificate-table directory entry and the table itself, which must be
// present, at most MaxSignatureBytes and the last thing in the file (no
// unsigned trailing data).
func parseLayout(r io.ReaderAt, size int64) (peLayout, error) {
	f, err := pe.NewFile(io.NewSectionReader(r, 0, size))
	if err != nil {
		return peLayout{}, refuse(ReasonInvalid, CodeInvalid, "the editor is not a well-formed PE image: %v", err)
	}
	var dirs []pe.DataDirectory
	var certDirOff int64
	switch h := f.OptionalHeader.(type) {
	case *pe.OptionalHeader64:
		dirs, certDirOff = h.DataDirectory[:min(h.NumberOfRvaAndSizes, 16)], certDirOffsetInOpt32Pl
	case *pe.OptionalHeader32:
		dirs, certDirOff = h.DataDirectory[:min(h.NumberOfRvaAndSizes, 16)], certDirOffsetInOpt32
	}
	if len(dirs) <= pe.IMAGE_DIRECTORY_ENTRY_SECURITY || dirs[pe.IMAGE_DIRECTORY_ENTRY_SECURITY].Size == 0 {
		return peLayout{}, refuse(ReasonInvalid, CodeInvalid, "the editor has no Authenticode signature")
	}
	var lfanew [4]byte
	if _, err := r.ReadAt(lfanew[:], 0x3c); err != nil {
		return peLayout{}, refuse(ReasonInvalid, CodeInvalid, "read the PE header: %v", err)
	}
	opt := int64(binary.LittleEndian.Uint32(lfanew[:])) + optionalHeaderOffset
	// The security directory's address is a file offset, not an RVA.
	d := dirs[pe.IMAGE_DIRECTORY_ENTRY_SECURITY]
	l := peLayout{size: size, checksumOff: opt + checksumOffsetInOpt, certDirOff: opt + certDirOff,
		certStart: int64(d.VirtualAddress), certSize: int64(d.Size)}
	if l.certSize > MaxSignatureBytes || l.certSize < winCertHeaderSize || l.certStart+l.certSize != size || l.certStart < l.certDirOff+8 {
		return peLayout{}, refuse(ReasonInvalid, CodeInvalid, "the editor's certificate table is malformed, larger than %d bytes, or not at the end of the file", MaxSignatureBytes)
	}
	return l, nil
}

// imageDigest is the Authenticode digest of the image: every byte before
// the certificate table except the checksum field and the certificate-table
// directory entry (the bytes osslsigncode and signtool hash for an image
// whose table is last).
func imageDigest(r io.ReaderAt, l peLayout, h crypto.Hash) ([]byte, error) {
	d := h.New()
	for _, span := range [][2]int64{{0, l.checksumOff}, {l.checksumOff + 4, l.certDirOff}, {l.certDirOff + 8, l.certStart}} {
		if _, err := io.Copy(d, io.NewSectionReader(r, span[0], span[1]-span[0])); err != nil {
			return nil, err
		}
	}
	return d.Sum(nil), nil
}

// InspectPE parses the Authenticode signature of a PE image of size bytes,
// verifies in pure Go that the image digest matches the signed one and that
// the signer's signature over it is valid (no chain, no revocation: that is
// the operating system's part), and returns the primary signature's signer
// leaf. The PKCS#7 structure and the signer-info signature are
// github.com/sassoftware/relic/v8/lib/pkcs7's. An unsigned, malformed or
// tampered image is signature-invalid; a signature without its signer
// certificate is signer-not-allowlisted, as in the reference.
func InspectPE(r io.ReaderAt, size int64) (leaf *x509.Certificate, err error) {
	defer func() {
		// A malformed image must never crash the check (FuzzInspectPE; its
		// finds are kept under testdata/fuzz as regression seeds).
		if p := recover(); p != nil {
			leaf, err = nil, refuse(ReasonInvalid, CodeInvalid, "the editor's signature is not well-formed")
		}
	}()
	l, err := parseLayout(r, size)
	if err != nil {
		return nil, err
	}
	table := make([]byte, l.certSize)
	if _, err := r.ReadAt(table, l.certStart); err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "read the certificate table: %v", err)
	}
	length := int64(binary.LittleEndian.Uint32(table[0:4]))
	if length < winCertHeaderSize || length > l.certSize ||
		binary.LittleEndian.Uint16(table[4:6]) != winCertRevision2 || binary.LittleEndian.Uint16(table[6:8]) != winCertTypePKCSSigned {
		return nil, refuse(ReasonInvalid, CodeInvalid, "the first certificate-table entry is not a PKCS#7 Authenticode signature")
	}
	psd, err := pkcs7.Unmarshal(table[winCertHeaderSize:length])
	if err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "the signature is not PKCS#7 SignedData: %v", err)
	}
	if !psd.Content.ContentInfo.ContentType.Equal(oidSpcIndirectDataContent) {
		return nil, refuse(ReasonInvalid, CodeInvalid, "the signature is not an Authenticode signature")
	}
	sig, err := psd.Content.Verify(nil, false)
	if err != nil {
		if errors.As(err, &pkcs7.MissingCertificateError{}) {
			return nil, refuse(ReasonNotAllowlisted, CodeNotAllowlisted, "the signature carries no signer certificate")
		}
		return nil, refuse(ReasonInvalid, CodeInvalid, "the signer's signature does not verify: %v", err)
	}
	var indirect spcIndirectDataContent
	if err := psd.Content.ContentInfo.Unmarshal(&indirect); err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "the signed content is not SpcIndirectDataContent: %v", err)
	}
	h, err := x509tools.PkixDigestToHashE(indirect.MessageDigest.DigestAlgorithm)
	if err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "unsupported image digest algorithm: %v", err)
	}
	got, err := imageDigest(r, l, h)
	if err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "digest the image: %v", err)
	}
	if !hmac.Equal(got, indirect.MessageDigest.Digest) {
		return nil, refuse(ReasonInvalid, CodeInvalid, "the image does not match its signed digest (%s): it was changed after signing", h)
	}
	if sig.Certificate == nil {
		return nil, refuse(ReasonNotAllowlisted, CodeNotAllowlisted, "the signature carries no signer certificate")
	}
	return sig.Certificate, nil
}
