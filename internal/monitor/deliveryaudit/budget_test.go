package deliveryaudit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// TestAuditRunsInsideItsRequestBudget: a healthy audit costs a handful of
// requests; an invalid BUILD_LOCK_REQUEST_BUDGET warns and keeps the
// default; with 2,000 issues by the workflow bot to page through, the
// smallest budget is spent and the audit fails with
// MONITOR_REQUEST_BUDGET_SPENT, sending nothing more.
func TestAuditRunsInsideItsRequestBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.schedule(5*time.Minute, "completed", "success")
	f.env[requestbudget.EnvRequestBudget] = "0"
	out, _, err := f.run(t)
	require.NoError(t, err, out)
	assert.Contains(t, out, "::warning::Ignoring invalid BUILD_LOCK_REQUEST_BUDGET=0; expected an integer between 10 and 250.")
	assert.Less(t, f.em.Metrics().Requests, int64(monitor.DefaultRequestBudget/3))

	f.schedule(time.Minute, "completed", "failure") // unhealthy: the issue is opened and verified
	out, writes, err := f.run(t, "--request-budget=10")
	require.NoError(t, err, out)
	assert.Positive(t, writes)
	assert.LessOrEqual(t, f.em.Metrics().Requests, int64(10))

	for i := range 2000 {
		_, err := f.em.CreateIssue(owner, repo, "github-actions[bot]", fmt.Sprintf("ops: other %d", i), "body", "closed")
		require.NoError(t, err)
	}
	_, writes, err = f.run(t, "--request-budget=10")
	assert.Zero(t, writes)
	var ee *requestbudget.ExhaustedError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, monitor.CodeRequestBudgetSpent, ee.Code)
	assert.Equal(t, int64(10), f.em.Metrics().Requests)
}
