package ensureeditor_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/ensureeditor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/signature"
)

// noVerify fails the test if an editor is ever verified.
type noVerify struct{ t *testing.T }

func (v noVerify) Verify(context.Context, string) (*signature.Verified, error) {
	v.t.Error("an editor was verified with invalid settings")
	return nil, errors.New("no verification may run")
}

// TestBadInputsAreAllReportedBeforeAnyCheck: every invalid input is listed
// in one error, before any editor is examined; nothing is written.
func TestBadInputsAreAllReportedBeforeAnyCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_OUTPUT":                  filepath.Join(dir, "output"),
		"GITHUB_STATE":                   filepath.Join(dir, "state"),
		"GITHUB_STEP_SUMMARY":            filepath.Join(dir, "summary"),
		"INPUT_UNITY-VERSION":            "6000",
		"INPUT_INSTALL-ROOT":             "relative/root",
		"INPUT_PROVISIONING-PROFILE":     "Everything",
		"INPUT_CI-MANAGED-ONLY":          "yes",
		"INPUT_DIAGNOSTICS-PATH":         "diag",
		"INPUT_REQUIRE-HEALTHY-EXISTING": "TRUE",
	}
	var out actionio.SyncBuffer
	err := ensureeditor.Run(context.Background(), ensureeditor.Deps{
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
	assert.Equal(t, []string{"unity-version", "install-root", "provisioning-profile", "ci-managed-only", "require-healthy-existing", "diagnostics-path"}, inputs)
	assert.Equal(t, "input-pattern-mismatch", lockaction.ReasonCode(err))
	for _, f := range []string{env["GITHUB_OUTPUT"], env["GITHUB_STATE"], env["GITHUB_STEP_SUMMARY"]} {
		_, serr := os.Stat(f)
		assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
	}
}
