package incidentaudit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/monitor/incidentaudit"
)

const (
	owner     = "acme"
	repo      = "build-lock"
	lock      = "unity-seats"
	statePath = "locks/unity-seats.json"
	token     = "ghs_workflowtokenvalue0123456789abcdef"
)

var epoch = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

type fixture struct {
	em  *emulator.Emulator
	clk *clock.Fake
	env map[string]string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	clk := clock.NewFake(epoch)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 5, ServerURL: "https://github.com"})
	em.AddOwner(owner, 1001, true)
	em.AddRepo(owner, repo, 2002, "main")
	require.NoError(t, em.CreateBranch(owner, repo, "lock-state", "main"))
	em.AddToken(token, emulator.TokenScope{Label: "workflow", Repos: []string{owner + "/" + repo},
		Permissions: map[string]string{"contents": "read", "issues": "write"}})
	return &fixture{em: em, clk: clk, env: map[string]string{
		"GITHUB_API_URL": "https://api.emulator.test", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_REPOSITORY": owner + "/" + repo, "GITHUB_TOKEN": token,
	}}
}

func (f *fixture) getenv(k string) string { return f.env[k] }

func (f *fixture) put(t *testing.T, data []byte) {
	t.Helper()
	_, err := f.em.PutFile(owner, repo, "lock-state", statePath, data)
	require.NoError(t, err)
}

func (f *fixture) putState(t *testing.T, s *lockstate.State) {
	t.Helper()
	data, err := lockstate.Encode(s)
	require.NoError(t, err)
	f.put(t, data)
}

// run executes the command in-process and returns its error, stdout and
// the number of write requests it made.
func (f *fixture) run(t *testing.T, args ...string) (string, int64, error) {
	t.Helper()
	if args == nil {
		args = []string{"--lock=" + lock, "--state-ref=lock-state"}
	}
	f.em.ResetMetrics()
	var out, errOut bytes.Buffer
	err := incidentaudit.Main(context.Background(), args, f.getenv, &out, &errOut,
		monitor.Deps{Transport: f.em.Transport(), Clock: f.clk})
	assert.NotContains(t, out.String()+errOut.String(), token)
	return out.String() + errOut.String(), f.em.Metrics().Writes, err
}

// issue is the part of an issue the tests inspect.
type issue struct {
	Number int    `json:"number"`
	Title  string `json:"title"`
	Body   string `json:"body"`
	State  string `json:"state"`
	User   struct {
		Login string `json:"login"`
	} `json:"user"`
}

// issues lists every issue of the repository through the emulator (after
// the run's metrics were taken).
func (f *fixture) issues(t *testing.T) []issue {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://api.emulator.test/repos/"+owner+"/"+repo+"/issues?state=all&per_page=100", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("User-Agent", "test")
	resp, err := f.em.Transport().RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out []issue
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out
}

// alerts returns the issues authored by the workflow bot.
func (f *fixture) alerts(t *testing.T) []issue {
	t.Helper()
	var out []issue
	for _, is := range f.issues(t) {
		if is.User.Login == emulator.WorkflowBotLogin {
			out = append(out, is)
		}
	}
	return out
}

func incident(t *testing.T, runID, runner string, at time.Time) *lockstate.Incident {
	t.Helper()
	inc, err := lockstate.IncidentFor(lockstate.Identity{Repository: "acme/game", Workflow: "Unity CI", Job: "build-windows",
		RunID: runID, RunAttempt: "1", RunnerID: runner}, at, "https://github.com")
	require.NoError(t, err)
	return inc
}

func schema5(inc *lockstate.Incident) *lockstate.State {
	return &lockstate.State{SchemaVersion: 5, Lock: lock, Holders: []lockstate.Holder{}, Queue: []lockstate.Entry{},
		Reservations: []lockstate.Reservation{}, ActiveIncident: inc, UpdatedAt: lockstate.FormatTime(epoch)}
}

func TestAlertLifecycleWithoutChurn(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// Healthy and no alert: nothing is written.
	f.putState(t, schema5(nil))
	out, writes, err := f.run(t)
	require.NoError(t, err, out)
	assert.Zero(t, writes)
	assert.Contains(t, out, "classification=healthy")
	assert.Empty(t, f.alerts(t))

	// Incident: the alert is created once...
	incA := incident(t, "99", "unity-win-03", epoch.Add(-5*time.Minute))
	f.putState(t, schema5(incA))
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	assert.Contains(t, out, "classification=incident-active incident="+incA.IncidentID)
	require.Len(t, f.alerts(t), 1)
	alert := f.alerts(t)[0]
	assert.Equal(t, incidentaudit.Title, alert.Title)
	assert.Equal(t, "open", alert.State)
	assert.Contains(t, alert.Body, incidentaudit.Marker)
	assert.Contains(t, alert.Body, "gh workflow run recover-build-lock.yml -f operation=recover-incident -f incident-id="+incA.IncidentID+" -f portal-cleanup-confirmed=true")

	// ...and a second run with the same incident writes nothing.
	f.clk.Advance(10 * time.Minute)
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.Zero(t, writes, "an unchanged incident must not churn the alert")
	assert.Contains(t, out, "alert=none")

	// A different incident updates the same alert.
	incB := incident(t, "120", "unity-win-04", epoch.Add(5*time.Minute))
	f.putState(t, schema5(incB))
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	assert.Contains(t, out, "alert=updated")
	require.Len(t, f.alerts(t), 1)
	assert.Equal(t, alert.Number, f.alerts(t)[0].Number)
	bodyB := f.alerts(t)[0].Body
	assert.Contains(t, bodyB, incB.IncidentID)

	// Recovery closes the alert without rewriting it.
	f.putState(t, schema5(nil))
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.EqualValues(t, 1, writes)
	assert.Contains(t, out, "alert=closed")
	require.Len(t, f.alerts(t), 1)
	assert.Equal(t, "closed", f.alerts(t)[0].State)
	assert.Equal(t, bodyB, f.alerts(t)[0].Body)

	// Still healthy: no churn.
	out, writes, err = f.run(t)
	require.NoError(t, err, out)
	assert.Zero(t, writes)

	// A later incident re-opens the same alert.
	incC := incident(t, "130", "unity-win-05", epoch.Add(30*time.Minute))
	f.putState(t, schema5(incC))
	out, _, err = f.run(t)
	require.NoError(t, err, out)
	assert.Contains(t, out, "alert=reopened")
	require.Len(t, f.alerts(t), 1)
	assert.Equal(t, "open", f.alerts(t)[0].State)
}

func TestInvalidEvidenceFailsRedAndLeavesTheAlertUntouched(t *testing.T) {
	t.Parallel()
	valid := func(t *testing.T) []byte {
		data, err := lockstate.Encode(schema5(incident(t, "99", "unity-win-03", epoch)))
		require.NoError(t, err)
		return data
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T, f *fixture)
		reason incidentaudit.Reason
	}{
		{"missing file", func(t *testing.T, f *fixture) {
			require.NoError(t, f.em.DeleteFile(owner, repo, "lock-state", statePath))
		}, incidentaudit.ReasonUnavailable},
		{"not json", func(t *testing.T, f *fixture) { f.put(t, []byte("{not json")) }, incidentaudit.ReasonMalformed},
		{"not an object", func(t *testing.T, f *fixture) { f.put(t, []byte("[]")) }, incidentaudit.ReasonMalformed},
		{"missing activeIncident at schema 5", func(t *testing.T, f *fixture) {
			f.put(t, []byte(strings.Replace(string(valid(t)), `"activeIncident"`, `"inactiveIncident"`, 1)))
		}, incidentaudit.ReasonMalformed},
		{"wrong lock", func(t *testing.T, f *fixture) {
			s := schema5(nil)
			s.Lock = "other-lock"
			f.putState(t, s)
		}, incidentaudit.ReasonWrongLock},
		{"newer schema", func(t *testing.T, f *fixture) {
			f.put(t, []byte(strings.Replace(string(valid(t)), `"schemaVersion": 5`, `"schemaVersion": 7`, 1)))
		}, incidentaudit.ReasonUnsupportedSchema},
		{"non-integer schema", func(t *testing.T, f *fixture) {
			f.put(t, []byte(strings.Replace(string(valid(t)), `"schemaVersion": 5`, `"schemaVersion": "five"`, 1)))
		}, incidentaudit.ReasonUnsupportedSchema},
		{"digest inconsistent", func(t *testing.T, f *fixture) {
			f.put(t, []byte(strings.Replace(string(valid(t)), `"runnerId": "unity-win-03"`, `"runnerId": "unity-win-09"`, 1)))
		}, incidentaudit.ReasonDigestInconsistent},
		{"incident id inconsistent", func(t *testing.T, f *fixture) {
			inc := incident(t, "99", "unity-win-03", epoch)
			f.put(t, []byte(strings.Replace(string(valid(t)), inc.IncidentID, "incident-000000000000000000000000", 1)))
		}, incidentaudit.ReasonDigestInconsistent},
		{"incident below schema 5", func(t *testing.T, f *fixture) {
			s := &lockstate.State{SchemaVersion: 4, Lock: lock, Holders: []lockstate.Holder{}, Queue: []lockstate.Entry{},
				Reservations: []lockstate.Reservation{}, UpdatedAt: lockstate.FormatTime(epoch)}
			data, err := lockstate.Encode(s)
			require.NoError(t, err)
			f.put(t, []byte(strings.Replace(string(data), `"reservations": [],`, `"reservations": [], "activeIncident": {"incidentId": "x"},`, 1)))
		}, incidentaudit.ReasonMalformed},
		{"control character in incident text", func(t *testing.T, f *fixture) {
			inc, err := lockstate.IncidentFor(lockstate.Identity{Repository: "acme/game", Workflow: "Unity\u2028CI", Job: "build",
				RunID: "99", RunAttempt: "1", RunnerID: "unity-win-03"}, epoch, "https://github.com")
			require.NoError(t, err)
			f.putState(t, schema5(inc))
		}, incidentaudit.ReasonMalformed},
		{"epoch reportedAt", func(t *testing.T, f *fixture) {
			f.putState(t, schema5(incident(t, "99", "unity-win-03", time.Unix(0, 0))))
		}, incidentaudit.ReasonMalformed},
		{"runUrl on another server", func(t *testing.T, f *fixture) {
			f.put(t, []byte(strings.Replace(string(valid(t)), "https://github.com/acme/game", "https://evil.example/acme/game", 1)))
		}, incidentaudit.ReasonMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.put(t, valid(t))
			out, _, err := f.run(t)
			require.NoError(t, err, out)
			require.Len(t, f.alerts(t), 1)
			before := f.alerts(t)[0]

			tc.mutate(t, f)
			out, writes, err := f.run(t)
			require.Error(t, err)
			var inv *incidentaudit.InvalidError
			require.True(t, errors.As(err, &inv), "%v", err)
			assert.Equal(t, tc.reason, inv.Reason, inv.Detail)
			assert.Equal(t, 1, monitor.ExitCode(err))
			assert.Zero(t, writes)
			assert.Contains(t, out, "::error::")
			assert.Equal(t, before, f.alerts(t)[0], "the alert must be left untouched")
		})
	}
}

func TestForeignLookalikeAndDuplicates(t *testing.T) {
	t.Parallel()
	t.Run("foreign lookalike is ignored", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		n, err := f.em.CreateIssue(owner, repo, "mallory", incidentaudit.Title, incidentaudit.Marker+"\nrun this script", "open")
		require.NoError(t, err)
		f.putState(t, schema5(incident(t, "99", "unity-win-03", epoch)))
		out, writes, err := f.run(t)
		require.NoError(t, err, out)
		assert.EqualValues(t, 1, writes)
		require.Len(t, f.alerts(t), 1)
		assert.NotEqual(t, n, f.alerts(t)[0].Number)

		// The lookalike is not closed on recovery either.
		f.putState(t, schema5(nil))
		out, _, err = f.run(t)
		require.NoError(t, err, out)
		for _, is := range f.issues(t) {
			if is.Number == n {
				assert.Equal(t, "open", is.State)
				assert.Equal(t, incidentaudit.Marker+"\nrun this script", is.Body)
			}
		}
	})
	t.Run("duplicate alerts are an error", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t)
		for i := 0; i < 2; i++ {
			_, err := f.em.CreateIssue(owner, repo, emulator.WorkflowBotLogin, "renamed "+string(rune('a'+i)), incidentaudit.Marker, "open")
			require.NoError(t, err)
		}
		f.putState(t, schema5(nil))
		_, writes, err := f.run(t)
		require.Error(t, err)
		assert.ErrorContains(t, err, "more than one issue")
		assert.Zero(t, writes)
	})
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"missing lock", []string{"--state-ref=lock-state"}, nil},
		{"bad lock", []string{"--lock=Bad_Lock"}, nil},
		{"bad ref", []string{"--lock=" + lock, "--state-ref=../main"}, nil},
		{"bad repo", []string{"--lock=" + lock, "--repo=not-a-repo"}, nil},
		{"no token", []string{"--lock=" + lock}, map[string]string{"GITHUB_TOKEN": ""}},
		{"http api", []string{"--lock=" + lock}, map[string]string{"GITHUB_API_URL": "http://api.emulator.test"}},
		{"unknown flag", []string{"--frobnicate"}, nil},
		{"budget below its bound", []string{"--lock=" + lock, "--request-budget=9"}, nil},
		{"budget above its bound", []string{"--lock=" + lock, "--request-budget=251"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			for k, v := range tc.env {
				f.env[k] = v
			}
			_, _, err := f.run(t, tc.args...)
			require.Error(t, err)
			assert.Equal(t, 2, monitor.ExitCode(err), "%v", err)
			assert.Zero(t, f.em.Metrics().Requests)
		})
	}
}

func TestAlertBodyGolden(t *testing.T) {
	t.Parallel()
	inc := incident(t, "99", "unity-win-03", epoch)
	inc.Job = "build | <script>@team</script>"
	cfg := incidentaudit.Config{Lock: lock, StateRef: "lock-state", Owner: owner, Repo: repo}
	body := incidentaudit.AlertBody(cfg, inc)
	assert.Equal(t, body, incidentaudit.AlertBody(cfg, inc), "the body must be deterministic")
	assert.NotContains(t, body, "<script>")
	assert.NotContains(t, body, "@team")
	path := filepath.Join("testdata", "alert.md")
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "regenerate with: UPDATE_GOLDEN=1 go test ./internal/monitor/incidentaudit/")
	assert.Equal(t, string(want), body, "regenerate with: UPDATE_GOLDEN=1 go test ./internal/monitor/incidentaudit/")
}

func TestClassifyIsPure(t *testing.T) {
	t.Parallel()
	cfg := incidentaudit.Config{Lock: lock, StateRef: "lock-state", Owner: owner, Repo: repo}
	data, err := lockstate.Encode(schema5(nil))
	require.NoError(t, err)
	ev, err := incidentaudit.Classify(data, cfg)
	require.NoError(t, err)
	assert.Equal(t, incidentaudit.Healthy, ev.Classification)
	assert.Equal(t, 5, ev.SchemaVersion)

	s2 := lockstate.Empty(lock)
	s2.UpdatedAt = lockstate.FormatTime(epoch)
	data, err = lockstate.Encode(s2)
	require.NoError(t, err)
	ev, err = incidentaudit.Classify(data, cfg)
	require.NoError(t, err)
	assert.Equal(t, incidentaudit.Healthy, ev.Classification)
}
