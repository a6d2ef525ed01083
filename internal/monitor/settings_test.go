package monitor_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/requestbudget"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestLoadSettingsDefaultsAndBudget: defaults fill the URLs, --repo wins
// over GITHUB_REPOSITORY, the budget comes from the flag, else the
// variable (an invalid one warns and keeps the default), else the default.
func TestLoadSettingsDefaultsAndBudget(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"GITHUB_TOKEN": " t ", "GITHUB_REPOSITORY": "o/r", requestbudget.EnvRequestBudget: "40"}
	var p edgesettings.Problems
	s := monitor.LoadSettings(env(vars), monitor.Flags{}, &p)
	require.NoError(t, p.Err())
	assert.Equal(t, monitor.Env{APIURL: "https://api.github.com", ServerURL: monitor.DefaultServerURL, Repository: "o/r", Token: "t"}, s.Env)
	assert.Equal(t, [2]string{"o", "r"}, [2]string{s.Owner, s.Repo})
	assert.Equal(t, 40, s.BudgetLimit)
	assert.Empty(t, s.BudgetWarnings)

	s = monitor.LoadSettings(env(vars), monitor.Flags{Repo: "x/y", RequestBudget: 12}, &p)
	require.NoError(t, p.Err())
	assert.Equal(t, [2]string{"x", "y"}, [2]string{s.Owner, s.Repo})
	assert.Equal(t, 12, s.BudgetLimit)

	vars[requestbudget.EnvRequestBudget] = "0"
	s = monitor.LoadSettings(env(vars), monitor.Flags{}, &p)
	require.NoError(t, p.Err())
	assert.Equal(t, monitor.DefaultRequestBudget, s.BudgetLimit)
	assert.Len(t, s.BudgetWarnings, 1)
}

// TestReadEnvReturnsTheFirstProblem: ReadEnv (the enrollment audit's
// reader) keeps its one-error contract; LoadSettings lists every problem.
func TestReadEnvReturnsTheFirstProblem(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"GITHUB_API_URL": "http://x", "GITHUB_SERVER_URL": "ftp://y"}
	_, err := monitor.ReadEnv(env(vars))
	require.ErrorIs(t, err, monitor.ErrUsage)
	assert.Contains(t, err.Error(), "GITHUB_API_URL")
	var e *edgesettings.Error
	assert.False(t, errors.As(err, &e))

	var p edgesettings.Problems
	monitor.LoadSettings(env(vars), monitor.Flags{RequestBudget: 5}, &p)
	require.ErrorAs(t, p.Err(), &e)
	assert.Len(t, e.Problems, 5, "API URL, server URL, token, repository, budget: %v", e)
}
