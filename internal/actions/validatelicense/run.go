package validatelicense

import (
	"context"
	"strconv"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// Deps are the injected edges of a run (see actionkit.Deps).
type Deps = actionkit.Deps

// The input and outputs of validate-unity-license.
const (
	InputActivationMode   = "activation-mode"
	OutputSerialPresent   = "serial-present"
	OutputEmailPresent    = "email-present"
	OutputPasswordPresent = "password-present"
)

// Run is the validate-unity-license action. The three presence booleans
// are written first; then the activation mode, the licensing server and the
// missing values are checked, in that order. No value is ever logged,
// written or measured.
func Run(_ context.Context, deps Deps) error {
	d := deps.WithDefaults()
	a := actionio.New(d.Getenv, d.Stdout)
	if err := a.RequireOutputFile(); err != nil {
		return err
	}
	for _, name := range []string{validation.EnvSerial, validation.EnvEmail, validation.EnvPassword} {
		if v := a.Getenv(name); validation.Present(v) {
			a.Mask(v) // defense in depth: the runner masks secrets, but not a value that arrived otherwise
		}
	}
	p := validation.LicensePresence{
		Serial:          validation.Present(a.Getenv(validation.EnvSerial)),
		Email:           validation.Present(a.Getenv(validation.EnvEmail)),
		Password:        validation.Present(a.Getenv(validation.EnvPassword)),
		LicensingServer: validation.Present(a.Getenv(validation.EnvLicensingServer)),
	}
	for _, o := range []struct {
		name    string
		present bool
	}{{OutputSerialPresent, p.Serial}, {OutputEmailPresent, p.Email}, {OutputPasswordPresent, p.Password}} {
		if err := a.SetOutput(o.name, strconv.FormatBool(o.present)); err != nil {
			return err
		}
	}
	if err := validation.CheckLicense(a.RawInput(InputActivationMode), p); err != nil {
		return err
	}
	a.Notice("Unity license secrets are present for serial activation (UNITY_SERIAL, UNITY_EMAIL, UNITY_PASSWORD); no licensing server is configured.")
	return nil
}
