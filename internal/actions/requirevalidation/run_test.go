package requirevalidation_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/requirevalidation"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/validation"
)

func run(t *testing.T, inputs map[string]string) (map[string]string, string, string, error) {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"GITHUB_OUTPUT": filepath.Join(dir, "out"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "sum")}
	for k, v := range inputs {
		env[actionio.InputEnvNames(k)[1]] = v // the composite action's underscore spelling
	}
	var log bytes.Buffer
	err := requirevalidation.Run(context.Background(), actionkit.Deps{Getenv: func(k string) string { return env[k] }, Stdout: &log})
	out, rerr := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	require.NoError(t, rerr)
	sum, _ := os.ReadFile(env["GITHUB_STEP_SUMMARY"])
	return out, string(sum), log.String(), err
}

var licensed = map[string]string{
	"static-validation-result": "success", "classifier-result": "success", "unity-required": "true", "trusted-revision": "true",
	"preflight-result": "success", "unity-result": "success", "fallback-result": "success", "fallback-cleanup-result": "noop",
}

func TestLicensedSuccessIsSafe(t *testing.T) {
	out, sum, log, err := run(t, licensed)
	require.NoError(t, err)
	assert.Equal(t, "true", out["validation-safe"])
	assert.Contains(t, sum, "Unity validation: safe (licensed success)")
	assert.Contains(t, log, "::notice::Unity validation is safe")
}

func TestUnsafeFailsAndNamesTheBrokenInput(t *testing.T) {
	in := map[string]string{}
	for k, v := range licensed {
		in[k] = v
	}
	in["fallback-cleanup-result"] = "quarantined"
	out, sum, _, err := run(t, in)
	var ue *requirevalidation.UnsafeError
	require.True(t, errors.As(err, &ue), "%v", err)
	assert.Equal(t, validation.ReasonFallbackCleanupNotNoop, ue.Verdict.Reason)
	assert.Equal(t, "false", out["validation-safe"], "written first, never turned")
	assert.ErrorContains(t, err, "licensed success")
	assert.ErrorContains(t, err, "fallback-cleanup-result")
	assert.Contains(t, sum, "| fallback-cleanup-result | `quarantined` ← breaks licensed success (expected \"noop\") |")
}

func TestNothingGivenIsUnsafe(t *testing.T) {
	out, _, _, err := run(t, nil)
	require.Error(t, err)
	assert.Equal(t, "false", out["validation-safe"])
}

func TestMissingOutputFileIsAnError(t *testing.T) {
	err := requirevalidation.Run(context.Background(), actionkit.Deps{Getenv: func(string) string { return "" }, Stdout: &bytes.Buffer{}})
	assert.ErrorIs(t, err, actionio.ErrFileCommandUnavailable)
}

// TestInputsAreTrimmedAsJavaScriptTrims: U+FEFF around a result is
// trimmed, U+0085 is part of it (unity-lifecycle-facts.md §7).
func TestInputsAreTrimmedAsJavaScriptTrims(t *testing.T) {
	in := map[string]string{}
	for k, v := range licensed {
		in[k] = "\ufeff" + v + "\u3000"
	}
	out, _, _, err := run(t, in)
	require.NoError(t, err)
	assert.Equal(t, "true", out["validation-safe"])
	in["static-validation-result"] = "success\u0085"
	_, _, _, err = run(t, in)
	var ue *requirevalidation.UnsafeError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, validation.ReasonStaticNotSuccess, ue.Verdict.Reason)
}
