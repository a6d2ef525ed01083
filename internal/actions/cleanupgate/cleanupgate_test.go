package cleanupgate_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/cleanupgate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/fakeeditor"
)

func gate(t *testing.T, in map[string]string) (*fakeeditor.Runner, string, error) {
	t.Helper()
	r := fakeeditor.NewRunner(t)
	for k, v := range in {
		r.Input(k, v)
	}
	var out actionio.SyncBuffer
	err := cleanupgate.Run(context.Background(), cleanupgate.Deps{Getenv: r.Getenv, Stdout: &out})
	return r, out.String(), err
}

func safeCooldown() map[string]string {
	return map[string]string{
		"acquired": "true", "classification-complete": "true", "cleanup-status": "confirmed", "cleanup-health": "healthy",
		"cleanup-reason": "cleanup-confirmed", "release-outcome": "success", "cleanup-result": "cooldown-started", "released": "true",
		"release-health": "healthy", "release-reason": "cleanup-confirmed", "reservation-state": "cooldown", "reservation-id": "r-1",
	}
}

func TestSafeWritesTrue(t *testing.T) {
	t.Parallel()
	r, log, err := gate(t, safeCooldown())
	require.NoError(t, err)
	assert.Equal(t, "true", r.Outputs()["cleanup-safe"])
	assert.Equal(t, []string{"cleanup-safe"}, r.OutputOrder())
	assert.NotContains(t, log, "::warning::")
	assert.Contains(t, r.Summary(), "cleanup-confirmed")
}

func TestUnsafeFailsAndLeavesFalse(t *testing.T) {
	t.Parallel()
	in := safeCooldown()
	in["cleanup-result"], in["release-outcome"], in["released"] = "lock-release-unreachable", "failure", "false"
	r, _, err := gate(t, in)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "lock-release-unreachable")
	assert.Equal(t, "false", r.Outputs()["cleanup-safe"])
}

func TestGlobalIncidentWarnsOnStdout(t *testing.T) {
	t.Parallel()
	in := safeCooldown()
	in["cleanup-result"], in["incident-id"] = "global-quarantined", "incident-0123456789abcdef01234567"
	r, log, err := gate(t, in)
	require.NoError(t, err)
	assert.Equal(t, "true", r.Outputs()["cleanup-safe"])
	assert.Contains(t, log, "::warning::Account incident incident-0123456789abcdef01234567 is active")
}

func TestNotAcquiredIsSafe(t *testing.T) {
	t.Parallel()
	r, _, err := gate(t, map[string]string{"acquired": "false"})
	require.NoError(t, err)
	assert.Equal(t, "true", r.Outputs()["cleanup-safe"])
	_, _, err = gate(t, map[string]string{})
	assert.ErrorContains(t, err, "acquired-invalid", "a missing acquired output is unsafe")
}

func TestMissingGITHUBOUTPUT(t *testing.T) {
	t.Parallel()
	r := fakeeditor.NewRunner(t)
	r.Env["GITHUB_OUTPUT"] = ""
	var out actionio.SyncBuffer
	assert.ErrorContains(t, cleanupgate.Run(context.Background(), cleanupgate.Deps{Getenv: r.Getenv, Stdout: &out}), "GITHUB_OUTPUT")
}

// TestInputsAreTrimmedAsJavaScriptTrims: the gate compares its inputs after
// String.prototype.trim (unity-lifecycle-facts.md §7): a U+FEFF around a
// value is trimmed, a U+0085 is part of the value.
func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	t.Parallel()
	r, _, err := gate(t, map[string]string{"acquired": "\ufefffalse\ufeff"})
	require.NoError(t, err)
	assert.Equal(t, "true", r.Outputs()["cleanup-safe"], "ZWNBSP is JavaScript whitespace")
	in := safeCooldown()
	for k, v := range in {
		in[k] = "\ufeff" + v + "\u2028"
	}
	r, _, err = gate(t, in)
	require.NoError(t, err)
	assert.Equal(t, "true", r.Outputs()["cleanup-safe"])
	_, _, err = gate(t, map[string]string{"acquired": "false\u0085"})
	assert.ErrorContains(t, err, "acquired-invalid", "NEL is not JavaScript whitespace")
}

// TestRefusalsCarryTheirRuleAsTheErrorTitle: an unsafe verdict is reported
// as ::error title=<rule code>:: (and as "Refused: <code>" in the job
// summary) by the binary's exit path, like every other action's refusal.
func TestRefusalsCarryTheirRuleAsTheErrorTitle(t *testing.T) {
	t.Parallel()
	in := safeCooldown()
	in["cleanup-result"], in["release-outcome"], in["released"] = "lock-release-unreachable", "failure", "false"
	for code, inputs := range map[string]map[string]string{
		"lock-release-unreachable":  in,
		"acquired-invalid":          {},
		"classification-incomplete": {"acquired": "true"},
	} {
		r, _, err := gate(t, inputs)
		assert.Equal(t, code, lockaction.ReasonCode(err))
		var out actionio.SyncBuffer
		assert.Equal(t, lockaction.ExitFailure, lockaction.Finish(actionio.New(r.Getenv, &out), nil, err))
		assert.Contains(t, out.String(), "::error title="+code+"::")
		assert.Contains(t, r.Summary(), "Refused: `"+code+"`")
	}
	r := fakeeditor.NewRunner(t)
	r.Env["GITHUB_OUTPUT"] = ""
	err := cleanupgate.Run(context.Background(), cleanupgate.Deps{Getenv: r.Getenv, Stdout: &actionio.SyncBuffer{}})
	assert.Equal(t, cleanupgate.CodeOutputFileMissing, lockaction.ReasonCode(err))
}
