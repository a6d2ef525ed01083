package signature_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

// TestAuthenticodeOnRealSignatures signs a tiny PE with each signer
// (osslsigncode and the in-test Go signer) and checks the accept path and
// every refusal through the OS-independent part of the verifier.
func TestAuthenticodeOnRealSignatures(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	ok := p.leaf(t, "Unity Technologies Test", []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning})
	noEKU := p.leaf(t, "No Code Signing", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
	stranger := p.leaf(t, "Stranger", []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning})
	allow := []string{signature.Thumbprint(ok.cert), signature.Thumbprint(noEKU.cert)}
	v := signature.Authenticode{Allowlist: allow}
	ctx := context.Background()
	for _, s := range signers(t) {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			signed := s.sign(t, ok, tinyPE())
			got, err := v.Verify(ctx, signed)
			require.NoError(t, err)
			assert.Equal(t, signature.Thumbprint(ok.cert), got.Thumbprint)
			assert.Regexp(t, `^[0-9A-F]{40}$`, got.Thumbprint)
			require.NoError(t, got.Close())

			t.Run("41 unsigned", func(t *testing.T) {
				unsigned := filepath.Join(t.TempDir(), "Unity.exe")
				require.NoError(t, os.WriteFile(unsigned, tinyPE(), 0o600))
				_, err := v.Verify(ctx, unsigned)
				assertRefusal(t, err, signature.ReasonInvalid, 41)
			})
			t.Run("41 tampered after signing", func(t *testing.T) {
				b, err := os.ReadFile(signed)
				require.NoError(t, err)
				b[0x200] = 0x90 // the .text section
				tampered := filepath.Join(t.TempDir(), "Unity.exe")
				require.NoError(t, os.WriteFile(tampered, b, 0o600))
				_, err = v.Verify(ctx, tampered)
				assertRefusal(t, err, signature.ReasonInvalid, 41)
			})
			t.Run("41 data appended after the signature", func(t *testing.T) {
				b, err := os.ReadFile(signed)
				require.NoError(t, err)
				appended := filepath.Join(t.TempDir(), "Unity.exe")
				require.NoError(t, os.WriteFile(appended, append(b, []byte("payload!")...), 0o600))
				_, err = v.Verify(ctx, appended)
				assertRefusal(t, err, signature.ReasonInvalid, 41)
			})
			t.Run("41 the operating system distrusts it", func(t *testing.T) {
				distrust := signature.Authenticode{Allowlist: allow, Trust: func(context.Context, *os.File) error { return errors.New("TRUST_E_BAD_DIGEST") }}
				_, err := distrust.Verify(ctx, signed)
				assertRefusal(t, err, signature.ReasonInvalid, 41)
				assert.Contains(t, err.Error(), "TRUST_E_BAD_DIGEST")
			})
			t.Run("41 not a PE", func(t *testing.T) {
				junk := filepath.Join(t.TempDir(), "Unity.exe")
				require.NoError(t, os.WriteFile(junk, []byte("#!/bin/sh\necho hi\n"), 0o700))
				_, err := v.Verify(ctx, junk)
				assertRefusal(t, err, signature.ReasonInvalid, 41)
			})
			t.Run("42 signer not allowlisted", func(t *testing.T) {
				_, err := v.Verify(ctx, s.sign(t, stranger, tinyPE()))
				assertRefusal(t, err, signature.ReasonNotAllowlisted, 42)
			})
			t.Run("42 the production allowlist refuses a throwaway signer", func(t *testing.T) {
				_, err := signature.Authenticode{Allowlist: signature.UnityThumbprints}.Verify(ctx, signed)
				assertRefusal(t, err, signature.ReasonNotAllowlisted, 42)
			})
			t.Run("43 allowlisted signer without the code-signing EKU", func(t *testing.T) {
				_, err := v.Verify(ctx, s.sign(t, noEKU, tinyPE()))
				assertRefusal(t, err, signature.ReasonNoCodeSigningEKU, 43)
			})
			t.Run("the Trust verdict sees the verified file from its start", func(t *testing.T) {
				var head []byte
				trust := signature.Authenticode{Allowlist: allow, Trust: func(_ context.Context, f *os.File) error {
					head = make([]byte, 2)
					_, err := f.Read(head)
					return err
				}}
				got, err := trust.Verify(ctx, signed)
				require.NoError(t, err)
				defer got.Close()
				assert.Equal(t, []byte("MZ"), head)
			})
		})
	}
}

func assertRefusal(t *testing.T, err error, reason signature.Reason, code int) {
	t.Helper()
	require.Error(t, err)
	var e *signature.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, reason, e.Reason, e.Error())
	assert.Equal(t, code, e.Code)
	assert.Equal(t, reason, signature.ReasonOf(err))
}

func TestRefusedPlatforms(t *testing.T) {
	t.Parallel()
	for _, goos := range []string{"linux", "freebsd", "plan9"} {
		_, err := signature.ForPlatform(goos).Verify(context.Background(), "/x")
		assert.Equal(t, signature.ReasonUnsupportedPlatform, signature.ReasonOf(err), goos)
	}
}

func TestCodesignArguments(t *testing.T) {
	t.Parallel()
	_, err := signature.CodesignArgs("", "/Applications/Unity.app/Contents/MacOS/Unity")
	assert.Equal(t, signature.ReasonDarwinNotApproved, signature.ReasonOf(err), "no reviewed team id: refused")
	assert.Empty(t, signature.UnityTeamID, "the team id is a reviewed constant; set it only with a native run")
	assert.False(t, signature.DarwinReturnApproved)
	args, err := signature.CodesignArgs("ABCDE12345", "/t/Unity.app/Contents/MacOS/Unity")
	require.NoError(t, err)
	assert.Equal(t, []string{"--verify", "--strict", "--deep", "-R",
		`=anchor apple generic and certificate leaf[field.1.2.840.113635.100.6.1.13] and certificate 1[field.1.2.840.113635.100.6.2.6] and certificate leaf[subject.OU] = "ABCDE12345"`,
		"/t/Unity.app/Contents/MacOS/Unity"}, args)
	_, err = signature.CodesignArgs("ABCDE12345", "relative")
	assert.Error(t, err)
}

// FuzzInspectPE: arbitrary bytes never panic and are never accepted.
func FuzzInspectPE(f *testing.F) {
	f.Add(tinyPE())
	f.Add([]byte("MZ"))
	f.Add(append(tinyPE(), bytes.Repeat([]byte{0xff}, 64)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		leaf, err := signature.InspectPE(bytes.NewReader(b), int64(len(b)))
		if err == nil && leaf == nil {
			t.Fatal("no error and no leaf")
		}
		if err != nil && !strings.Contains(err.Error(), "editor signature refused") {
			t.Fatalf("untyped error %v", err)
		}
	})
}

// TestOsslsigncodeVerifiesTheGoSigner closes the loop: the image digest
// the Go signer (and the verifier) computes is the one osslsigncode
// computes, so the in-test signer is a faithful stand-in when osslsigncode
// is missing.
func TestOsslsigncodeVerifiesTheGoSigner(t *testing.T) {
	t.Parallel()
	tool, err := exec.LookPath("osslsigncode")
	if err != nil {
		t.Skip("osslsigncode not installed")
	}
	p := newPKI(t)
	l := p.leaf(t, "Go Signed", []x509.ExtKeyUsage{x509.ExtKeyUsageCodeSigning})
	ca := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.caCert.Raw}), 0o600))
	signed := goSign(t, l, tinyPE())
	out, err := exec.Command(tool, "verify", "-CAfile", ca, "-in", signed).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "Signature verification: ok")
	b, err := os.ReadFile(signed)
	require.NoError(t, err)
	b[0x200] = 0x90
	tampered := filepath.Join(t.TempDir(), "Unity.exe")
	require.NoError(t, os.WriteFile(tampered, b, 0o600))
	out, err = exec.Command(tool, "verify", "-CAfile", ca, "-in", tampered).CombinedOutput()
	assert.Error(t, err, "osslsigncode accepted a tampered image: %s", out)
}
