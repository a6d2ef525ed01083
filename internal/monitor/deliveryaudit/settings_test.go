package deliveryaudit_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings/settingstest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/deliveryaudit"
)

// TestEveryBadSettingIsReportedInOneRun: an http API URL, no token, a
// malformed repository, a budget out of bounds, a bad workflow name and a
// zero delay are reported together (exit code 2), with nothing sent.
func TestEveryBadSettingIsReportedInOneRun(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GITHUB_API_URL": "http://api.example", "GITHUB_REPOSITORY": "no-slash"}
	var out, errOut bytes.Buffer
	err := deliveryaudit.Main(context.Background(), []string{"--workflow=../x.yml", "--max-delivery-delay=0s", "--request-budget=9"},
		func(k string) string { return env[k] }, &out, &errOut, monitor.Deps{Transport: settingstest.NoRequests(t)})
	assert.Equal(t, 2, monitor.ExitCode(err))
	e, _ := settingstest.Problems(t, err)
	assert.Len(t, e.Problems, 6, "%v", err)
	for _, want := range []string{"GITHUB_API_URL", "GITHUB_TOKEN", "no-slash", "--request-budget", "--workflow", "--max-delivery-delay"} {
		assert.Contains(t, err.Error(), want)
	}
	assert.Contains(t, out.String(), "::error::", "one ::error:: listing them")
}
