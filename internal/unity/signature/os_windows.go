//go:build windows

package signature

import (
	"context"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// OSVerifier returns the Windows verifier on Windows, else nil.
func OSVerifier(goos string) Verifier {
	if goos != "windows" {
		return nil
	}
	return Authenticode{Allowlist: UnityThumbprints, Trust: winVerifyTrust}
}

// winVerifyTrust asks WinVerifyTrust for the Authenticode verdict on the
// open handle (WINTRUST_ACTION_GENERIC_VERIFY_V2, no UI, whole-chain
// revocation excluding the root), the API Get-AuthenticodeSignature uses.
// https://learn.microsoft.com/windows/win32/api/wintrust/nf-wintrust-winverifytrust
func winVerifyTrust(ctx context.Context, f *os.File) error {
	path, err := windows.UTF16PtrFromString(f.Name())
	if err != nil {
		return err
	}
	file := &windows.WinTrustFileInfo{
		Size:     uint32(unsafe.Sizeof(windows.WinTrustFileInfo{})),
		FilePath: path,
		File:     windows.Handle(f.Fd()),
	}
	data := &windows.WinTrustData{
		Size:                            uint32(unsafe.Sizeof(windows.WinTrustData{})),
		UIChoice:                        windows.WTD_UI_NONE,
		RevocationChecks:                windows.WTD_REVOKE_WHOLECHAIN,
		UnionChoice:                     windows.WTD_CHOICE_FILE,
		StateAction:                     windows.WTD_STATEACTION_VERIFY,
		ProvFlags:                       windows.WTD_REVOCATION_CHECK_CHAIN_EXCLUDE_ROOT,
		FileOrCatalogOrBlobOrSgnrOrCert: unsafe.Pointer(file),
	}
	done := make(chan error, 1)
	go func() {
		verr := windows.WinVerifyTrustEx(windows.InvalidHWND, &windows.WINTRUST_ACTION_GENERIC_VERIFY_V2, data)
		data.StateAction = windows.WTD_STATEACTION_CLOSE
		_ = windows.WinVerifyTrustEx(windows.InvalidHWND, &windows.WINTRUST_ACTION_GENERIC_VERIFY_V2, data)
		done <- verr
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("WinVerifyTrust: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("WinVerifyTrust did not answer in time: %w", ctx.Err())
	}
}
