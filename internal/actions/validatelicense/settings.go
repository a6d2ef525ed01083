package validatelicense

import (
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// Settings is everything validate-unity-license reads from the
// environment, read once by LoadSettings before any output.
type Settings struct {
	// Files are the step's file-command paths; Files.Output is set.
	Files edgesettings.Files
	// RawActivationMode is the activation-mode input untrimmed
	// (validation.CheckLicense applies the reference's default and trim).
	RawActivationMode string
	// Secrets are the present serial secrets' values, masked by the core
	// before anything else is written; never logged, written or measured.
	Secrets []string
	// Presence says which license variables are set.
	Presence validation.LicensePresence
}

// LoadSettings reads the activation mode, the license variables' presence
// and the file-command paths. The one refusal it can return is a missing
// GITHUB_OUTPUT (the presence outputs could not be written); the license
// verdict itself is the action's decision, taken after the outputs.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p edgesettings.Problems
	s := Settings{Files: edgesettings.ReadFiles(getenv), RawActivationMode: edgesettings.Input(getenv, InputActivationMode)}
	if s.Files.Output == "" {
		p.Add(fmt.Errorf("GITHUB_OUTPUT is not set, so this action cannot write its fail-closed outputs: %w", actionio.ErrFileCommandUnavailable))
	}
	for _, name := range []string{validation.EnvSerial, validation.EnvEmail, validation.EnvPassword} {
		if v := getenv(name); validation.Present(v) {
			s.Secrets = append(s.Secrets, v)
		}
	}
	s.Presence = validation.LicensePresence{
		Serial:          validation.Present(getenv(validation.EnvSerial)),
		Email:           validation.Present(getenv(validation.EnvEmail)),
		Password:        validation.Present(getenv(validation.EnvPassword)),
		LicensingServer: validation.Present(getenv(validation.EnvLicensingServer)),
	}
	return s, p.Err()
}
