package monitor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
)

// TestSessionAndIssueSync: a session started from settings syncs one issue
// (created, then left alone, then closed) inside its budget, and a failed
// sync names the issue.
func TestSessionAndIssueSync(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	em := emulator.New(emulator.Options{Clock: clk, Seed: 3, ServerURL: "https://github.com"})
	em.AddOwner("acme", 1001, true)
	em.AddRepo("acme", "locks", 2002, "main")
	em.AddToken("tok", emulator.TokenScope{Label: "workflow", Repos: []string{"acme/locks"}, Permissions: map[string]string{"issues": "write"}})
	s := monitor.Settings{Env: monitor.Env{APIURL: "https://api.emulator.test", ServerURL: "https://github.com", Token: "tok"},
		Owner: "acme", Repo: "locks", BudgetLimit: monitor.MinRequestBudget, BudgetWarnings: []string{"budget warning"}}
	var warned []string
	sess, err := monitor.Start(context.Background(), s, monitor.Deps{Transport: em.Transport(), Clock: clk}, func(w string) { warned = append(warned, w) })
	require.NoError(t, err)
	defer sess.Close()
	assert.Equal(t, []string{"budget warning"}, warned)

	is, err := monitor.NewIssueSync(sess.GH, s.Owner, s.Repo, githubissue.Options{Clock: sess.Clock}, "test issue")
	require.NoError(t, err)
	spec := githubissue.Spec{Marker: "<!-- monitor-test -->", Title: "ops: test", MatchTitle: true, Body: "<!-- monitor-test -->\nbody", State: githubissue.Open}
	res, err := is.Sync(sess.Ctx, spec)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionCreated, res.Action)
	res, err = is.Sync(sess.Ctx, spec)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionNone, res.Action)
	spec.State = githubissue.Closed
	res, err = is.Sync(sess.Ctx, spec)
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionClosed, res.Action)
	assert.LessOrEqual(t, sess.Budget.Used(), monitor.MinRequestBudget)

	_, err = is.Sync(sess.Ctx, githubissue.Spec{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sync test issue: ")
}
