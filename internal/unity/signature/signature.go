package signature

import (
	"context"
	"crypto/sha1"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fileid"
)

// Central policy (facts §1). Changing any of these is a reviewed release:
// consumers cannot supply signer identities.
var (
	// UnityThumbprints are the SHA-1 thumbprints (uppercase hex) of the
	// Unity leaf certificates allowed to sign Unity.exe.
	UnityThumbprints = []string{
		"228FB6411B0A144478C86AAA3CD9473C43A8ABA7",
		"BFFD800651947878FCD0DC749C16D57B0D5E397D",
	}
)

const (
	// CodeSigningEKU is the extended key usage the signer leaf must carry.
	CodeSigningEKU = "1.3.6.1.5.5.7.3.3"
	// VerifyTimeout bounds one verification (the reference's 30 s).
	VerifyTimeout = 30 * time.Second
	// UnityTeamID is the reviewed Apple team identifier of Unity's Developer
	// ID certificate. It is empty until it is read from a real installed
	// editor (codesign -dv --verbose=4) and reviewed; the Darwin verifier
	// refuses while it is empty.
	UnityTeamID = ""
	// DarwinReturnApproved gates the Darwin license return: false until a
	// reviewed team identifier and a native macOS run exist.
	DarwinReturnApproved = false
)

// Reason is the stable reason of a refusal.
type Reason string

// Refusal reasons. The first three carry the reference verifier's exit
// codes 41, 42 and 43.
const (
	ReasonInvalid             Reason = "signature-invalid"
	ReasonNotAllowlisted      Reason = "signer-not-allowlisted"
	ReasonNoCodeSigningEKU    Reason = "signer-missing-code-signing-eku"
	ReasonUnsupportedPlatform Reason = "platform-unsupported"
	ReasonDarwinNotApproved   Reason = "darwin-return-not-approved"
)

// Exit codes of the reference's verifier, kept as data on each refusal.
const (
	CodeInvalid          = 41
	CodeNotAllowlisted   = 42
	CodeNoCodeSigningEKU = 43
)

// Error is a refusal: a stable Reason, the reference's Code where it has
// one, and a Detail an operator can act on (never a credential).
type Error struct {
	Reason Reason
	Code   int
	Detail string
}

// ReasonCode returns Reason (the ::error title and the job summary's code).
func (e *Error) ReasonCode() string { return string(e.Reason) }

// Error implements error.
func (e *Error) Error() string {
	if e.Code != 0 {
		return fmt.Sprintf("editor signature refused (%s, reference code %d): %s", e.Reason, e.Code, e.Detail)
	}
	return fmt.Sprintf("editor signature refused (%s): %s", e.Reason, e.Detail)
}

func refuse(r Reason, code int, format string, args ...any) *Error {
	return &Error{Reason: r, Code: code, Detail: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the Reason of a refusal, or "" for other errors.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// Verified is a verified editor. On Windows it holds the handle that was
// verified, which denies writers, renames and deletes until Close: keep it
// open until the editor has been started.
type Verified struct {
	// Thumbprint is the signer leaf's SHA-1 thumbprint (uppercase hex); empty
	// for a codesign verdict.
	Thumbprint string
	pin        io.Closer
}

// Close releases the pin.
func (v *Verified) Close() error {
	if v == nil || v.pin == nil {
		return nil
	}
	return v.pin.Close()
}

// Verifier verifies the editor binary at an absolute path.
type Verifier interface {
	Verify(ctx context.Context, path string) (*Verified, error)
}

// Thumbprint returns the SHA-1 thumbprint of cert in uppercase hex, as
// Windows displays it.
func Thumbprint(cert *x509.Certificate) string {
	s := sha1.Sum(cert.Raw)
	return strings.ToUpper(hex.EncodeToString(s[:]))
}

// Authenticode is the Windows verifier: Trust (the operating system's
// verdict) and then, in Go, the PE signature's signer leaf against the
// allowlist and the code-signing EKU.
type Authenticode struct {
	// Allowlist holds uppercase SHA-1 thumbprints.
	Allowlist []string
	// Trust is the operating system's verdict on the open file; nil leaves
	// only the pure-Go check (tests, and the OS-independent rules on Linux).
	Trust func(ctx context.Context, f *os.File) error
}

// Verify opens path without following links (on Windows denying writers),
// asks Trust, then inspects the signature of the same open file.
func (a Authenticode) Verify(ctx context.Context, path string) (*Verified, error) {
	ctx, cancel := context.WithTimeout(ctx, VerifyTimeout)
	defer cancel()
	f, err := fileid.OpenFile(path)
	if err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "cannot open the editor for verification: %v", err)
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
		}
	}()
	if a.Trust != nil {
		if err := a.Trust(ctx, f); err != nil {
			return nil, refuse(ReasonInvalid, CodeInvalid, "the operating system does not trust the editor's Authenticode signature: %v", err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, refuse(ReasonInvalid, CodeInvalid, "rewind the editor: %v", err)
		}
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "read the editor: %v", err)
	}
	leaf, err := InspectPE(f, size)
	if err != nil {
		return nil, err
	}
	if err := CheckLeaf(leaf, a.Allowlist); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, refuse(ReasonInvalid, CodeInvalid, "verification did not finish within %s", VerifyTimeout)
	}
	ok = true
	return &Verified{Thumbprint: Thumbprint(leaf), pin: f}, nil
}

// CheckLeaf applies the allowlist (42) and the code-signing EKU (43).
func CheckLeaf(leaf *x509.Certificate, allowlist []string) error {
	if leaf == nil {
		return refuse(ReasonNotAllowlisted, CodeNotAllowlisted, "no signer certificate")
	}
	tp := Thumbprint(leaf)
	if !slices.Contains(allowlist, tp) {
		return refuse(ReasonNotAllowlisted, CodeNotAllowlisted, "signer certificate %s is not in the central allowlist", tp)
	}
	if !slices.Contains(leaf.ExtKeyUsage, x509.ExtKeyUsageCodeSigning) {
		return refuse(ReasonNoCodeSigningEKU, CodeNoCodeSigningEKU, "signer certificate %s does not carry the code-signing EKU %s", tp, CodeSigningEKU)
	}
	return nil
}

// Refuse is the verifier of a platform without a supported check.
type Refuse struct {
	Reason Reason
	Detail string
}

// Verify always refuses.
func (r Refuse) Verify(context.Context, string) (*Verified, error) {
	return nil, refuse(r.Reason, 0, "%s", r.Detail)
}

// ForPlatform returns the verifier of goos: the operating system's verifier
// on Windows and macOS (see [OSVerifier]) and a refusal elsewhere. goos is
// normally runtime.GOOS; a different value on this build also refuses.
func ForPlatform(goos string) Verifier {
	if v := OSVerifier(goos); v != nil {
		return v
	}
	return Refuse{Reason: ReasonUnsupportedPlatform, Detail: fmt.Sprintf("editor signatures are verified only on Windows and macOS; %s is refused with no fallback", goos)}
}
