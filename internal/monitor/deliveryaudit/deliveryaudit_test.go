package deliveryaudit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/deliveryaudit"
)

const (
	owner    = "acme"
	repo     = "build-lock"
	workflow = "reap-stale-locks.yml"
	token    = "ghs_deliveryaudittoken0123456789abcdef"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

var cfg = deliveryaudit.Config{Owner: owner, Repo: repo, Workflow: workflow, MaxDeliveryDelay: 30 * time.Minute,
	MaxRunDuration: 15 * time.Minute, ServerURL: "https://github.com"}

func run(id int64, age time.Duration, status, conclusion string) deliveryaudit.Run {
	return deliveryaudit.Run{ID: id, RunNumber: int(id), Attempt: 1, Event: "schedule", Status: status, Conclusion: conclusion,
		Path: ".github/workflows/" + workflow, CreatedAt: now.Add(-age), StartedAt: now.Add(-age)}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	ok := func(id int64, age time.Duration) deliveryaudit.Run { return run(id, age, "completed", "success") }
	cases := []struct {
		name    string
		runs    []deliveryaudit.Run
		want    deliveryaudit.Classification
		subject int64
	}{
		{"no runs", nil, deliveryaudit.ScheduledRunMissing, 0},
		{"healthy", []deliveryaudit.Run{ok(2, 4*time.Minute), ok(1, 9*time.Minute)}, deliveryaudit.Healthy, 0},
		{"healthy while the newest is running", []deliveryaudit.Run{run(2, 3*time.Minute, "in_progress", ""), ok(1, 8*time.Minute)}, deliveryaudit.Healthy, 0},
		{"healthy at exactly the delay", []deliveryaudit.Run{ok(1, 30*time.Minute)}, deliveryaudit.Healthy, 0},
		{"overdue", []deliveryaudit.Run{ok(2, 31*time.Minute), ok(1, 36*time.Minute)}, deliveryaudit.ScheduledRunOverdue, 2},
		{"overdue beats stalled", []deliveryaudit.Run{run(2, 45*time.Minute, "in_progress", "")}, deliveryaudit.ScheduledRunOverdue, 2},
		{"stalled newest", []deliveryaudit.Run{run(2, 16*time.Minute, "in_progress", ""), ok(1, 21*time.Minute)}, deliveryaudit.ScheduledRunStalled, 2},
		{"stalled behind a pending run", []deliveryaudit.Run{run(3, 2*time.Minute, "pending", ""), run(2, 20*time.Minute, "in_progress", "")}, deliveryaudit.ScheduledRunStalled, 2},
		{"unsuccessful", []deliveryaudit.Run{run(2, 4*time.Minute, "completed", "failure"), ok(1, 9*time.Minute)}, deliveryaudit.ScheduledRunUnsuccessful, 2},
		{"cancelled is unsuccessful", []deliveryaudit.Run{run(2, 4*time.Minute, "completed", "cancelled")}, deliveryaudit.ScheduledRunUnsuccessful, 2},
		{"unsuccessful behind a running one", []deliveryaudit.Run{run(3, 1*time.Minute, "queued", ""), run(2, 6*time.Minute, "completed", "timed_out")}, deliveryaudit.ScheduledRunUnsuccessful, 2},
		{"a success after a failure is healthy", []deliveryaudit.Run{ok(3, 1*time.Minute), run(2, 6*time.Minute, "completed", "failure")}, deliveryaudit.Healthy, 0},
		{"API order does not matter", []deliveryaudit.Run{ok(1, 9*time.Minute), run(2, 4*time.Minute, "completed", "failure")}, deliveryaudit.ScheduledRunUnsuccessful, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := deliveryaudit.Classify(tc.runs, now, cfg)
			require.NoError(t, err)
			assert.Equal(t, tc.want, v.Classification)
			if tc.subject != 0 {
				require.NotNil(t, v.Subject)
				assert.Equal(t, tc.subject, v.Subject.ID)
			}
		})
	}
}

func TestClassifyInvalidEvidence(t *testing.T) {
	t.Parallel()
	mut := func(f func(*deliveryaudit.Run)) []deliveryaudit.Run {
		r := run(2, 4*time.Minute, "completed", "success")
		f(&r)
		return []deliveryaudit.Run{r}
	}
	cases := map[string][]deliveryaudit.Run{
		"three runs":          {run(3, time.Minute, "completed", "success"), run(2, 6*time.Minute, "completed", "success"), run(1, 11*time.Minute, "completed", "success")},
		"identical created":   {run(2, 5*time.Minute, "completed", "success"), run(1, 5*time.Minute, "completed", "success")},
		"no id":               mut(func(r *deliveryaudit.Run) { r.ID = 0 }),
		"wrong event":         mut(func(r *deliveryaudit.Run) { r.Event = "push" }),
		"other workflow":      mut(func(r *deliveryaudit.Run) { r.Path = ".github/workflows/ci.yml" }),
		"no created_at":       mut(func(r *deliveryaudit.Run) { r.CreatedAt = time.Time{} }),
		"created in future":   mut(func(r *deliveryaudit.Run) { r.CreatedAt = now.Add(time.Hour) }),
		"unknown status":      mut(func(r *deliveryaudit.Run) { r.Status = "exploded" }),
		"completed no result": mut(func(r *deliveryaudit.Run) { r.Conclusion = "" }),
		"active with result":  mut(func(r *deliveryaudit.Run) { r.Status = "in_progress"; r.Conclusion = "success" }),
	}
	for name, runs := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v, err := deliveryaudit.Classify(runs, now, cfg)
			var de *deliveryaudit.Error
			require.True(t, errors.As(err, &de), "%v", err)
			assert.Equal(t, deliveryaudit.WorkflowEvidenceInvalid, de.Classification)
			assert.Equal(t, deliveryaudit.WorkflowEvidenceInvalid, v.Classification)
		})
	}
}

func TestBodyIsDeterministicAndGolden(t *testing.T) {
	t.Parallel()
	runs := []deliveryaudit.Run{run(2, 16*time.Minute, "in_progress", ""), run(1, 21*time.Minute, "completed", "success")}
	a, err := deliveryaudit.Classify(runs, now, cfg)
	require.NoError(t, err)
	b, err := deliveryaudit.Classify(runs, now.Add(5*time.Minute), cfg)
	require.NoError(t, err)
	require.Equal(t, a.Classification, b.Classification)
	assert.Equal(t, deliveryaudit.Body(cfg, a), deliveryaudit.Body(cfg, b), "the body must not depend on the audit's clock")

	body := deliveryaudit.Body(cfg, a)
	path := filepath.Join("testdata", "stalled.md")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "regenerate with: UPDATE_GOLDEN=1 go test ./internal/monitor/deliveryaudit/")
	assert.Equal(t, string(want), body, "regenerate with: UPDATE_GOLDEN=1 go test ./internal/monitor/deliveryaudit/")
}

// --- against the emulator ---

type fixture struct {
	em  *emulator.Emulator
	clk *clock.Fake
	env map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := clock.NewFake(now)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 9, ServerURL: "https://github.com"})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	em.AddToken(token, emulator.TokenScope{Label: "workflow", Repos: []string{owner + "/" + repo},
		Permissions: map[string]string{"actions": "read", "contents": "read", "issues": "write"}})
	// A manual run makes the workflow known even before any schedule fired.
	em.CreateRun(owner, repo, emulator.Run{Workflow: workflow, Event: "workflow_dispatch", Status: "completed", Conclusion: "success",
		CreatedAt: now.Add(-2 * time.Hour)})
	return &fixture{em: em, clk: clk, env: map[string]string{
		"GITHUB_API_URL": "https://api.emulator.test", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_TOKEN": token,
	}}
}

func (f *fixture) schedule(age time.Duration, status, conclusion string) int64 {
	at := f.clk.Now().Add(-age)
	return f.em.CreateRun(owner, repo, emulator.Run{Workflow: workflow, Event: "schedule", Status: status, Conclusion: conclusion,
		CreatedAt: at, StartedAt: at})
}

func (f *fixture) run(t *testing.T, args ...string) (string, int64, error) {
	t.Helper()
	f.em.ResetMetrics()
	var out, errOut bytes.Buffer
	err := deliveryaudit.Main(context.Background(), args, func(k string) string { return f.env[k] }, &out, &errOut,
		monitor.Deps{Transport: f.em.Transport(), Clock: f.clk})
	assert.NotContains(t, out.String()+errOut.String(), token)
	return out.String() + errOut.String(), f.em.Metrics().Writes, err
}

type issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	User   struct {
		Login string `json:"login"`
	} `json:"user"`
}

func (f *fixture) issues(t *testing.T) []issue {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://api.emulator.test/repos/"+owner+"/"+repo+"/issues?state=all&per_page=100", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.em.Transport().RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out []issue
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

func TestEveryClassificationAgainstTheEmulator(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		seed  func(f *fixture)
		want  deliveryaudit.Classification
		state string // issue state after the run; "" = no issue
	}{
		{"missing", func(*fixture) {}, deliveryaudit.ScheduledRunMissing, "open"},
		{"healthy", func(f *fixture) {
			f.schedule(9*time.Minute, "completed", "success")
			f.schedule(4*time.Minute, "completed", "success")
		}, deliveryaudit.Healthy, ""},
		{"overdue", func(f *fixture) { f.schedule(40*time.Minute, "completed", "success") }, deliveryaudit.ScheduledRunOverdue, "open"},
		{"stalled", func(f *fixture) {
			f.schedule(25*time.Minute, "completed", "success")
			f.schedule(20*time.Minute, "in_progress", "")
		}, deliveryaudit.ScheduledRunStalled, "open"},
		{"unsuccessful", func(f *fixture) { f.schedule(5*time.Minute, "completed", "failure") }, deliveryaudit.ScheduledRunUnsuccessful, "open"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tc.seed(f)
			out, writes, err := f.run(t)
			require.NoError(t, err, out)
			assert.Contains(t, out, "classification="+string(tc.want))
			is := f.issues(t)
			if tc.state == "" {
				assert.Empty(t, is)
				assert.Zero(t, writes)
			} else {
				require.Len(t, is, 1)
				assert.Equal(t, tc.state, is[0].State)
				assert.Equal(t, deliveryaudit.Title, is[0].Title)
				assert.Equal(t, emulator.WorkflowBotLogin, is[0].User.Login)
				assert.Contains(t, is[0].Body, string(tc.want))
			}
			// The same evidence a minute later: zero writes.
			f.clk.Advance(time.Minute)
			out, writes, err = f.run(t)
			require.NoError(t, err, out)
			assert.Zero(t, writes, "second run must not churn the issue: %s", out)
		})
	}
}

func TestInvalidEvidenceAndUnavailableAPIFailRed(t *testing.T) {
	t.Parallel()
	t.Run("identical created_at", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		f.schedule(5*time.Minute, "completed", "success")
		f.schedule(5*time.Minute, "completed", "success")
		out, writes, err := f.run(t)
		var de *deliveryaudit.Error
		require.True(t, errors.As(err, &de), "%v", err)
		assert.Equal(t, deliveryaudit.WorkflowEvidenceInvalid, de.Classification)
		assert.Equal(t, 1, monitor.ExitCode(err))
		assert.Contains(t, out, "::error::")
		assert.Zero(t, writes)
		assert.Empty(t, f.issues(t))
	})
	t.Run("unknown workflow", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		_, writes, err := f.run(t, "--workflow=no-such-workflow.yml")
		var de *deliveryaudit.Error
		require.True(t, errors.As(err, &de), "%v", err)
		assert.Equal(t, deliveryaudit.WorkflowAPIUnavailable, de.Classification)
		assert.Equal(t, 1, monitor.ExitCode(err))
		assert.Zero(t, writes)
	})
	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		for _, args := range [][]string{{"--workflow=../x.yml"}, {"--max-delivery-delay=0s"}, {"--max-run-duration=abc"}, {"extra"},
			{"--request-budget=9"}, {"--request-budget=251"}, {"--request-budget=many"}} {
			_, _, err := f.run(t, args...)
			assert.Equal(t, 2, monitor.ExitCode(err), "%v: %v", args, err)
		}
		assert.Zero(t, f.em.Metrics().Requests)
	})
}

func TestIssueLifecycleOpensClosesAndReopens(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.schedule(5*time.Minute, "completed", "failure")
	out, writes, err := f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	num := f.issues(t)[0].Number

	// A successful run: the issue is closed with a healthy body.
	f.schedule(1*time.Minute, "completed", "success")
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	is := f.issues(t)
	require.Len(t, is, 1)
	assert.Equal(t, "closed", is[0].State)
	assert.Contains(t, is[0].Body, "back within SLO")

	// More healthy runs change the evidence, but a closed issue is terminal
	// while healthy: no writes.
	f.clk.Advance(5 * time.Minute)
	f.schedule(0, "completed", "success")
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.Zero(t, writes)

	// Delivery stops: the same issue re-opens.
	f.clk.Advance(45 * time.Minute)
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	assert.Contains(t, out, "classification=scheduled-run-overdue")
	is = f.issues(t)
	require.Len(t, is, 1)
	assert.Equal(t, num, is[0].Number)
	assert.Equal(t, "open", is[0].State)
}

func TestLookalikesWithAnotherTitleOrAuthorAreIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.em.CreateIssue(owner, repo, "mallory", deliveryaudit.Title, deliveryaudit.Marker, "open")
	require.NoError(t, err)
	_, err = f.em.CreateIssue(owner, repo, emulator.WorkflowBotLogin, "renamed by someone", deliveryaudit.Marker, "open")
	require.NoError(t, err)
	f.schedule(5*time.Minute, "completed", "failure")
	out, writes, err := f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	assert.Len(t, f.issues(t), 3)
}
