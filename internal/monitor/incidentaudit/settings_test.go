package incidentaudit_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/incidentaudit"
)

// TestEveryBadSettingIsReportedInOneRun: no token, a malformed repository,
// a budget out of bounds, a bad lock name and a bad state ref are
// reported together (exit code 2), with nothing sent.
func TestEveryBadSettingIsReportedInOneRun(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GITHUB_REPOSITORY": "no-slash", "BUILD_LOCK_NAME": "Not A Lock"}
	var out, errOut bytes.Buffer
	err := incidentaudit.Main(context.Background(), []string{"--state-ref=a..b", "--request-budget=251"},
		func(k string) string { return env[k] }, &out, &errOut, monitor.Deps{Transport: settingstest.NoRequests(t)})
	assert.Equal(t, 2, monitor.ExitCode(err))
	e, _ := settingstest.Problems(t, err)
	assert.Len(t, e.Problems, 5, "%v", err)
	for _, want := range []string{"GITHUB_TOKEN", "no-slash", "--request-budget", "--lock", "--state-ref"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Contains(t, out.String(), "::error::")
}
