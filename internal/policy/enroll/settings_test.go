package enroll_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/enroll"
)

// TestBadEnvironmentIsAllReportedBeforeAnyRequest: audit and onboard with
// an invalid workflow environment and invalid reader App credentials report
// both in one run, send nothing and write neither the artifact nor the
// summary.
func TestBadEnvironmentIsAllReportedBeforeAnyRequest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"GITHUB_API_URL":          "http://api.example.com",
		"GITHUB_REPOSITORY":       "acme/build-lock",
		"GITHUB_TOKEN":            "ghs_workflow",
		"GITHUB_STEP_SUMMARY":     filepath.Join(dir, "summary"),
		lockaction.EnvReaderAppID: "reader",
	}
	for _, args := range [][]string{
		{"audit", "--out", filepath.Join(dir, "audit.json")},
		{"onboard", "--repository", "acme/game"},
	} {
		api := settingstest.NoRequests(t)
		var stdout strings.Builder
		err := enroll.Main(context.Background(), args, func(k string) string { return env[k] }, &stdout, io.Discard, monitor.Deps{Transport: api})
		require.Error(t, err, args[0])
		assert.ErrorIs(t, err, monitor.ErrUsage)
		assert.Equal(t, 2, enroll.ExitCode(err))
		assert.Contains(t, err.Error(), "GITHUB_API_URL", args[0])
		assert.Contains(t, err.Error(), lockaction.EnvReaderAppID, args[0])
		for _, f := range []string{filepath.Join(dir, "audit.json"), env["GITHUB_STEP_SUMMARY"]} {
			_, serr := os.Stat(f)
			assert.True(t, errors.Is(serr, os.ErrNotExist), "%s written: %v", f, serr)
		}
	}
}
