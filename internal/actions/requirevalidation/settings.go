package requirevalidation

import (
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

// Settings is everything require-unity-validation reads from the
// environment, read once by LoadSettings before any output.
type Settings struct {
	// Files are the step's file-command paths; Files.Output is set.
	Files edgesettings.Files
	// Inputs are the job results, each trimmed as JavaScript trims. Their
	// values are the gate's evidence, judged by the core (an unexpected
	// value is an unsafe verdict, not an input refusal).
	Inputs validation.Inputs
}

// LoadSettings reads the job-result inputs and the file-command paths. The
// one refusal it can return is a missing GITHUB_OUTPUT: the fail-closed
// validation-safe=false could not be written.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p edgesettings.Problems
	in := func(name string) string { return jsinput.Value(edgesettings.Input(getenv, name)) }
	s := Settings{Files: edgesettings.ReadFiles(getenv), Inputs: validation.Inputs{
		StaticValidation: in(validation.InputStaticValidation),
		Classifier:       in(validation.InputClassifier),
		UnityRequired:    in(validation.InputUnityRequired),
		TrustedRevision:  in(validation.InputTrustedRevision),
		Preflight:        in(validation.InputPreflight),
		Unity:            in(validation.InputUnity),
		Fallback:         in(validation.InputFallback),
		FallbackCleanup:  in(validation.InputFallbackCleanup),
	}}
	if s.Files.Output == "" {
		p.Add(fmt.Errorf("GITHUB_OUTPUT is not set, so this action cannot write its fail-closed outputs: %w", actionio.ErrFileCommandUnavailable))
	}
	return s, p.Err()
}
