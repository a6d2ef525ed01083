package validation

import (
	"fmt"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/jsstr"
)

// The one activation mode validate-unity-license supports
// (reference-behavior.md §1.13).
const ActivationModeSerial = "serial"

// Environment variables the license check reads. Only their presence is
// ever reported.
const (
	EnvSerial          = "UNITY_SERIAL"
	EnvEmail           = "UNITY_EMAIL"
	EnvPassword        = "UNITY_PASSWORD"
	EnvLicensingServer = "UNITY_LICENSING_SERVER"
)

// Stable reason codes of a [LicenseError].
const (
	ReasonActivationModeUnsupported = "activation-mode-unsupported"
	ReasonLicensingServerSet        = "licensing-server-set"
	ReasonSecretsMissing            = "unity-secrets-missing"
)

// LicensePresence says which values are present (non-empty after
// String.prototype.trim); a whitespace-only value is absent
// (unity-lifecycle-facts.md §7).
type LicensePresence struct {
	Serial, Email, Password, LicensingServer bool
}

// Present reports whether v counts as present: non-empty after
// JavaScript's trim (jsstr.Trim), so a value of only U+FEFF is absent and
// one of only U+0085 is present, as in the reference.
func Present(v string) bool { return jsstr.Trim(v) != "" }

// LicenseError is a refusal of the license check. It names variables,
// never values.
type LicenseError struct {
	Reason  string
	Missing []string
	Message string
}

// Error implements error.
func (e *LicenseError) Error() string { return e.Message }

// ReasonCode returns Reason.
func (e *LicenseError) ReasonCode() string { return e.Reason }

// CheckLicense runs the checks in the order of unity-lifecycle-facts.md §7:
// the activation mode, then
// the licensing server (UNITY_LICENSING_SERVER set is refused: this suite
// accounts for serial seats, and a floating-license server would bypass the
// lock's accounting), then the three serial secrets. rawMode is the
// activation-mode input untrimmed: an empty input means serial, anything
// else is trimmed as JavaScript trims and must then be serial, so a
// whitespace-only mode is refused as the reference refuses it (its default
// applies only to an empty input).
func CheckLicense(rawMode string, p LicensePresence) error {
	mode := ActivationModeSerial
	if rawMode != "" {
		mode = jsstr.Trim(rawMode)
	}
	if mode != ActivationModeSerial {
		return &LicenseError{Reason: ReasonActivationModeUnsupported,
			Message: `input activation-mode: only "serial" is supported (serial-seat activation is what the build lock accounts for)`}
	}
	if p.LicensingServer {
		return &LicenseError{Reason: ReasonLicensingServerSet,
			Message: EnvLicensingServer + " is set: a Unity licensing server is not supported; this workflow activates serial seats that the build lock accounts for, so unset it for this step"}
	}
	var missing []string
	for _, v := range []struct {
		name    string
		present bool
	}{{EnvSerial, p.Serial}, {EnvEmail, p.Email}, {EnvPassword, p.Password}} {
		if !v.present {
			missing = append(missing, v.name)
		}
	}
	if len(missing) > 0 {
		return &LicenseError{Reason: ReasonSecretsMissing, Missing: missing,
			Message: fmt.Sprintf("%s empty or unset: pass the organization's Unity secrets through this step's env: (fork pull requests receive no secrets)", strings.Join(missing, ", "))}
	}
	return nil
}
