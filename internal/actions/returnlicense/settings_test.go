package returnlicense_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/returnlicense"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

// noVerify fails the test if the editor is ever verified (nothing may run
// on invalid settings).
type noVerify struct{ t *testing.T }

func (v noVerify) Verify(context.Context, string) (*signature.Verified, error) {
	v.t.Error("the editor was verified with invalid settings")
	return nil, errors.New("no verification may run")
}

// TestBadInputsAreAllReportedBeforeAnyCommand: every invalid input is
// listed in one error; no editor is verified or run, no evidence written,
// and only the contract's pessimistic outputs (written before any check)
// and the evidence log path are set.
func TestBadInputsAreAllReportedBeforeAnyCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"RUNNER_TEMP":         filepath.Join(dir, "tmp"),
		"GITHUB_RUN_ID":       "5",
		"GITHUB_RUN_ATTEMPT":  "1",
		"GITHUB_OUTPUT":       filepath.Join(dir, "output"),
		"GITHUB_STATE":        filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"INPUT_UNITY-VERSION": "not a version",
		"INPUT_TOOL-CACHE":    "relative/cache",
		"INPUT_EDITOR-LAYOUT": "sideways",
		"INPUT_UNITY-EMAIL":   " someone@example.com ",
	}
	var out actionio.SyncBuffer
	err := returnlicense.Run(context.Background(), returnlicense.Deps{
		Getenv: func(k string) string { return env[k] }, Stdout: &out, GOOS: "windows", Verifier: noVerify{t},
	})
	var se *lockaction.SettingsError
	require.ErrorAs(t, err, &se)
	var inputs []string
	for _, p := range se.Problems {
		var ie *actionio.InputError
		require.ErrorAs(t, p, &ie)
		inputs = append(inputs, ie.Input)
	}
	assert.Equal(t, []string{"unity-version", "tool-cache", "editor-layout", "unity-password"}, inputs)
	outputs, rerr := actionio.ReadFileCommands(env["GITHUB_OUTPUT"])
	require.NoError(t, rerr)
	assert.Equal(t, map[string]string{"return-command-completed": "false", "evidence-capture-complete": "false",
		"return-log-path": outputs["return-log-path"]}, outputs)
	assert.True(t, strings.HasPrefix(outputs["return-log-path"], env["RUNNER_TEMP"]))
	for _, f := range []string{env["GITHUB_STATE"], env["GITHUB_STEP_SUMMARY"], env["RUNNER_TEMP"]} {
		_, serr := os.Stat(f)
		assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
	}
	assert.Contains(t, out.String(), "::add-mask::someone@example.com")
}
