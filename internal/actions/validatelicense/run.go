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

// Run is the validate-unity-license action: LoadSettings, then Execute.
func Run(ctx context.Context, deps Deps) error {
	s, err := LoadSettings(deps.Getenv)
	if err != nil {
		return err
	}
	return Execute(ctx, s, deps)
}

// Execute is the action's core over settled settings. The three presence
// booleans are written first; then the activation mode, the licensing
// server and the missing values are checked, in that order. No value is
// ever logged, written or measured.
func Execute(_ context.Context, s Settings, deps Deps) error {
	a := actionio.New(s.Files.Getenv, deps.Stdout)
	for _, v := range s.Secrets {
		a.Mask(v) // defense in depth: the runner masks secrets, but not a value that arrived otherwise
	}
	p := s.Presence
	for _, o := range []struct {
		name    string
		present bool
	}{{OutputSerialPresent, p.Serial}, {OutputEmailPresent, p.Email}, {OutputPasswordPresent, p.Password}} {
		if err := a.SetOutput(o.name, strconv.FormatBool(o.present)); err != nil {
			return err
		}
	}
	if err := validation.CheckLicense(s.RawActivationMode, p); err != nil {
		return err
	}
	a.Notice("Unity license secrets are present for serial activation (UNITY_SERIAL, UNITY_EMAIL, UNITY_PASSWORD); no licensing server is configured.")
	return nil
}
