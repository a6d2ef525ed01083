package incidentaudit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

// TestAuditStopsAtItsRequestBudget: a repository with 4,000 issues by the
// workflow bot would make the alert discovery page 40 times. The audit
// stops at its budget with MONITOR_REQUEST_BUDGET_SPENT (exit 1), sends
// not one request more and writes nothing; a budget that covers the
// discovery lets the same run finish.
func TestAuditStopsAtItsRequestBudget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	s := lockstate.Empty(lock)
	s.SchemaVersion = 5
	s.Reservations = []lockstate.Reservation{}
	f.putState(t, s)
	for i := range 4000 {
		_, err := f.em.CreateIssue(owner, repo, "github-actions[bot]", fmt.Sprintf("ops: something else %d", i), "body", "closed")
		require.NoError(t, err)
	}

	out, writes, err := f.run(t, "--lock="+lock, "--state-ref=lock-state")
	var ee *requestbudget.ExhaustedError
	require.ErrorAs(t, err, &ee, out)
	assert.Equal(t, monitor.CodeRequestBudgetSpent, ee.Code)
	assert.Equal(t, 1, monitor.ExitCode(err))
	assert.Equal(t, int64(monitor.DefaultRequestBudget), f.em.Metrics().Requests, "not one request more than the budget")
	assert.Zero(t, writes)
	assert.Contains(t, out, "::error::Build lock incident recovery audit: MONITOR_REQUEST_BUDGET_SPENT")

	f.env[requestbudget.EnvRequestBudget] = "60"
	out, _, err = f.run(t, "--lock="+lock, "--state-ref=lock-state")
	require.NoError(t, err, out)
	assert.Contains(t, out, "classification=healthy")
	assert.LessOrEqual(t, f.em.Metrics().Requests, int64(60))

	f.env[requestbudget.EnvRequestBudget] = "lots"
	out, _, err = f.run(t, "--lock="+lock, "--state-ref=lock-state", "--request-budget=200")
	require.NoError(t, err, out)
	assert.NotContains(t, out, "Ignoring invalid", "the flag wins; the environment is not read")
}
