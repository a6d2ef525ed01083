// Package signature decides whether an editor binary is the organization's
// Unity editor before any credential is handed to it (unity-lifecycle-facts
// §1). It is shared by return-unity-license and ensure-unity-editor.
//
//   - Windows: the operating system verifies the Authenticode signature
//     (WinVerifyTrust, WINTRUST_ACTION_GENERIC_VERIFY_V2, whole-chain
//     revocation) on a handle that denies writers, then the same bytes are
//     parsed in Go: the primary signature's signer leaf must have an
//     allowlisted SHA-1 thumbprint and the code-signing EKU. Three refusals,
//     three stable reasons: signature-invalid (the reference's exit 41),
//     signer-not-allowlisted (42, also "no signer certificate") and
//     signer-missing-code-signing-eku (43).
//   - macOS: `codesign --verify --strict --deep -R =<requirement>` on the
//     Mach-O inside the bundle; the verdict is codesign's exit status, never
//     its output. The requirement pins a reviewed Unity team identifier that
//     does not exist yet ([UnityTeamID] is empty), so the Darwin verifier
//     refuses, and the return action refuses Darwin by policy
//     ([DarwinReturnApproved]) until a reviewed identifier and a native run
//     exist.
//   - Every other platform: refused, no fallback.
//
// The OS-independent part ([InspectPE], and [Authenticode] with a nil Trust)
// parses and verifies the PE signature in pure Go: the image digest
// (computed here, debug/pe locating the excluded fields) and the signer's
// signature (github.com/sassoftware/relic/v8/lib/pkcs7), no chain. That is
// how the rules are tested on Linux against binaries signed by osslsigncode
// (and by an in-test Go signer that osslsigncode verifies).
// relic's higher-level authenticode package is not used: it does not build
// for windows/arm64.
// WinVerifyTrust and codesign are never run in CI; docs/actions.md lists
// them as needing a Windows or macOS runner check.
package signature
