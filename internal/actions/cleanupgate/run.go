package cleanupgate

import (
	"context"
	"errors"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/cleanup"
)

// Deps are the edges of a run (only Getenv, read by LoadSettings, and
// Stdout are used).
type Deps = actionkit.Deps

// Input names (reference-behavior §1.11).
const (
	InputAcquired               = "acquired"
	InputClassificationComplete = "classification-complete"
	InputCleanupStatus          = "cleanup-status"
	InputCleanupHealth          = "cleanup-health"
	InputCleanupReason          = "cleanup-reason"
	InputReleaseOutcome         = "release-outcome"
	InputCleanupResult          = "cleanup-result"
	InputReleased               = "released"
	InputReleaseHealth          = "release-health"
	InputReleaseReason          = "release-reason"
	InputReservationState       = "reservation-state"
	InputReservationID          = "reservation-id"
	InputIncidentID             = "incident-id"
	// OutputCleanupSafe is the gate's one output.
	OutputCleanupSafe = "cleanup-safe"
)

// CodeOutputFileMissing is the refusal code when GITHUB_OUTPUT is unset.
const CodeOutputFileMissing = "output-file-missing"

// UnsafeError is the gate's failure: the stable Code of the first rule the
// inputs broke (internal/unity/cleanup's codes, e.g. cleanup-not-confirmed
// or lock-release-unreachable), which becomes the ::error title, and a
// message saying what to do.
type UnsafeError struct {
	Code    string
	Message string
}

// Error implements error.
func (e *UnsafeError) Error() string { return e.Message }

// ReasonCode returns Code (the ::error title and the job summary's code).
func (e *UnsafeError) ReasonCode() string { return e.Code }

// Run is the require-confirmed-unity-cleanup action: LoadSettings, then
// Execute.
func Run(ctx context.Context, deps Deps) error {
	if ctx == nil {
		return errors.New("cleanupgate: nil context")
	}
	if deps.Getenv == nil || deps.Stdout == nil {
		return errors.New("cleanupgate: Getenv and Stdout are required")
	}
	s, err := LoadSettings(deps.Getenv)
	if err != nil {
		return err
	}
	return Execute(ctx, s, deps)
}

// Execute is the gate's core over settled settings: cleanup-safe=false
// first, then the decision, the summary and (safe only) cleanup-safe=true.
func Execute(_ context.Context, s Settings, deps Deps) error {
	a := actionio.New(s.Files.Getenv, deps.Stdout)
	if err := a.SetOutput(OutputCleanupSafe, "false"); err != nil {
		return err
	}
	d := cleanup.Evaluate(s.Inputs)
	_ = a.Summary(actionkit.Table("Unity cleanup gate", []actionkit.Row{
		{Field: "Cleanup safe", Value: fmt.Sprint(d.Safe)},
		{Field: "Rule", Value: markdown.Code(string(d.Code))},
		{Field: "Detail", Value: markdown.Message(d.Message)},
	}))
	if !d.Safe {
		return &UnsafeError{Code: string(d.Code), Message: "unity cleanup not confirmed (" + string(d.Code) + "): " + d.Message}
	}
	if err := a.SetOutput(OutputCleanupSafe, "true"); err != nil {
		return err
	}
	if d.Warning != "" {
		a.Warning(d.Warning)
	}
	a.Notice(d.Message)
	return nil
}
