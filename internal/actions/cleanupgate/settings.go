package cleanupgate

import (
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/cleanup"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/jsinput"
)

// Settings is everything require-confirmed-unity-cleanup reads from the
// environment, read once by LoadSettings before any output.
type Settings struct {
	// Files are the step's file-command paths; Files.Output is set.
	Files edgesettings.Files
	// Inputs are the evidence inputs, each trimmed as JavaScript trims and
	// judged by cleanup.Evaluate (a bad value is an unsafe verdict).
	Inputs cleanup.Inputs
}

// LoadSettings reads the evidence inputs and the file-command paths. The
// one refusal it can return is a missing GITHUB_OUTPUT
// (CodeOutputFileMissing): the fail-closed cleanup-safe=false could not be
// written.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var p edgesettings.Problems
	in := func(name string) string { return jsinput.Value(edgesettings.Input(getenv, name)) }
	s := Settings{Files: edgesettings.ReadFiles(getenv), Inputs: cleanup.Inputs{
		Acquired: in(InputAcquired), ClassificationComplete: in(InputClassificationComplete),
		CleanupStatus: in(InputCleanupStatus), CleanupHealth: in(InputCleanupHealth), CleanupReason: in(InputCleanupReason),
		ReleaseOutcome: in(InputReleaseOutcome), CleanupResult: in(InputCleanupResult), Released: in(InputReleased),
		ReleaseHealth: in(InputReleaseHealth), ReleaseReason: in(InputReleaseReason),
		ReservationState: in(InputReservationState), ReservationID: in(InputReservationID), IncidentID: in(InputIncidentID),
	}}
	if s.Files.Output == "" {
		p.Add(&UnsafeError{Code: CodeOutputFileMissing, Message: "GITHUB_OUTPUT is not set: the cleanup gate must write cleanup-safe"})
	}
	return s, p.Err()
}
