package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

const (
	statusOwner = "acme"
	statusRepo  = "build-lock"
	statusLock  = "unity-seats"
	statusToken = "ghs_statustokenvalue0123456789abcdefgh"
)

var statusNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// statusState is a valid schema-5 lock: two holders, two queued jobs, a
// cooldown, a quarantine and an active incident.
func statusState(t *testing.T) *lockstate.State {
	t.Helper()
	ts := func(d time.Duration) string { return lockstate.FormatTime(statusNow.Add(d)) }
	entry := func(run, job, runner string, queued time.Duration) lockstate.Entry {
		return lockstate.Entry{HolderID: "acme/game:" + run + ":" + job + ":default", Repository: "acme/game", Workflow: "Unity CI", Job: job,
			RunID: run, RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/" + run, QueuedAt: ts(queued), RunnerID: runner}
	}
	res := func(id, state, runner string, created time.Duration, avail string) lockstate.Reservation {
		return lockstate.Reservation{ReservationID: id, HolderID: "acme/tools:90:test:default", Repository: "acme/tools", Workflow: "CI", Job: "test",
			RunID: "90", RunAttempt: "1", RunURL: "https://github.com/acme/tools/actions/runs/90", RunnerID: runner,
			Reason: "release cleanup was not proven resource-safe", State: state, CreatedAt: ts(created), AvailableAt: avail}
	}
	inc, err := lockstate.IncidentFor(lockstate.Identity{Repository: "acme/game", Workflow: "Unity CI", Job: "build-windows", RunID: "99",
		RunAttempt: "1", RunnerID: "unity-win-03"}, statusNow.Add(-42*time.Minute), "https://github.com")
	require.NoError(t, err)
	return &lockstate.State{
		SchemaVersion: 5, Lock: statusLock, UpdatedAt: ts(-time.Minute),
		Holders: []lockstate.Holder{
			{Entry: entry("101", "build-linux", "unity-linux-01", -25*time.Minute), AcquiredAt: ts(-20 * time.Minute), ExpiresAt: ts(220 * time.Minute)},
			{Entry: entry("102", "build-mac", "unity-mac-01", -5*time.Hour), AcquiredAt: ts(-4*time.Hour - 30*time.Minute), ExpiresAt: ts(-30 * time.Minute)},
		},
		Queue: []lockstate.Entry{entry("103", "build-ios", "unity-mac-02", -12*time.Minute), entry("104", "build-linux", "unity-linux-02", -90*time.Second)},
		Reservations: []lockstate.Reservation{
			res("7b0c1d2e-0000-4000-8000-000000000001", lockstate.ReservationCooldown, "unity-linux-03", -2*time.Minute, ts(4*time.Minute)),
			res("7b0c1d2e-0000-4000-8000-000000000002", lockstate.ReservationQuarantine, "unity-win-01", -3*time.Hour, ""),
		},
		ActiveIncident: inc,
	}
}

type statusFixture struct {
	em  *emulator.Emulator
	clk *clock.Fake
	env map[string]string
}

func newStatusFixture(t *testing.T) *statusFixture {
	t.Helper()
	clk := clock.NewFake(statusNow)
	em := emulator.New(emulator.Options{Clock: clk, Seed: 11})
	em.AddOwner(statusOwner, 1001, true)
	em.AddRepo(statusOwner, statusRepo, 2002, "main")
	require.NoError(t, em.CreateBranch(statusOwner, statusRepo, "lock-state", "main"))
	em.AddToken(statusToken, emulator.TokenScope{Label: "reader", Repos: []string{statusOwner + "/" + statusRepo},
		Permissions: map[string]string{"contents": "read"}})
	_, err := em.PutFile(statusOwner, statusRepo, "main", "locks/"+statusLock+".config.json",
		[]byte(`{"maxHolders": 4, "runnerSerialization": true, "resourceLifecycle": true, "accountHealth": true, "releaseCooldownSeconds": 360}`))
	require.NoError(t, err)
	return &statusFixture{em: em, clk: clk, env: map[string]string{
		"GITHUB_API_URL": "https://api.emulator.test", "GITHUB_SERVER_URL": "https://github.com", "LOCK_READER_TOKEN": statusToken,
	}}
}

func (f *statusFixture) putState(t *testing.T, s *lockstate.State) {
	t.Helper()
	data, err := lockstate.Encode(s)
	require.NoError(t, err)
	_, err = f.em.PutFile(statusOwner, statusRepo, "lock-state", "locks/"+statusLock+".json", data)
	require.NoError(t, err)
}

func (f *statusFixture) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := statusCommand(context.Background(), args, &out, &errOut,
		statusDeps{getenv: func(k string) string { return f.env[k] }, transport: f.em.Transport(), clock: f.clk})
	assert.NotContains(t, out.String()+errOut.String(), statusToken)
	return out.String(), errOut.String(), err
}

func TestStatusGolden(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	f.putState(t, statusState(t))
	for format, ext := range map[string]string{"table": "txt", "json": "json", "markdown": "md"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			out, errOut, err := f.run(t, "--repo", statusOwner+"/"+statusRepo, "--lock", statusLock, "--format", format, "--token-env", "LOCK_READER_TOKEN")
			require.NoError(t, err, errOut)
			assert.Empty(t, errOut)
			path := filepath.Join("testdata", "status."+ext)
			if os.Getenv("UPDATE_GOLDEN") == "1" {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, []byte(out), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "regenerate with: UPDATE_GOLDEN=1 go test ./cmd/buildlock/ -run TestStatusGolden")
			assert.Equal(t, string(want), out, "regenerate with: UPDATE_GOLDEN=1 go test ./cmd/buildlock/ -run TestStatusGolden")
		})
	}
}

func TestStatusOfAMissingLockIsEmpty(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	f.env["GITHUB_TOKEN"] = statusToken
	out, _, err := f.run(t, "--repo", statusOwner+"/"+statusRepo, "--lock", "never-used")
	require.NoError(t, err)
	assert.Contains(t, out, "0 of 1 seats occupied")
}

func TestStatusFailsClosedOnInvalidState(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	_, err := f.em.PutFile(statusOwner, statusRepo, "lock-state", "locks/"+statusLock+".json", []byte(`{"lock":"other","schemaVersion":2,"holder":null,"holders":[],"queue":[]}`))
	require.NoError(t, err)
	_, _, err = f.run(t, "--repo", statusOwner+"/"+statusRepo, "--lock", statusLock, "--token-env", "LOCK_READER_TOKEN")
	require.Error(t, err)
	assert.Equal(t, lockstate.CodeLockMismatch, lockstate.CodeOf(err))
}

func TestStatusUsage(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	for _, args := range [][]string{
		{"--lock", statusLock},
		{"--repo", "nope", "--lock", statusLock},
		{"--repo", "a/b"},
		{"--repo", "a/b", "--lock", statusLock, "--format", "yaml"},
		{"--repo", "a/b", "--lock", statusLock, "--token-env", "BAD-NAME"},
		{"--repo", "a/b", "--lock", "bad/lock", "--token-env", "LOCK_READER_TOKEN"},
		{"--no-such-flag"},
		{"--repo", "a/b", "--lock", statusLock, "extra"},
	} {
		_, _, err := f.run(t, args...)
		assert.True(t, errors.Is(err, errUsage), "%v: %v", args, err)
	}
	// No token is an error, not a usage error.
	_, _, err := f.run(t, "--repo", "a/b", "--lock", statusLock)
	require.Error(t, err)
	assert.False(t, errors.Is(err, errUsage))
	assert.Contains(t, err.Error(), "GITHUB_TOKEN")
	assert.Zero(t, f.em.Metrics().Requests)

	// The production entry point rejects flags before touching anything.
	assert.ErrorIs(t, runStatus(context.Background(), []string{"--repo", "a/b", "--lock", "x", "--format", "yaml"}, &bytes.Buffer{}, &bytes.Buffer{}), errUsage)
}

// TestUpgradeCommand: the status fixture's schema-5 lock with a config that
// now asks for fencedAdmission: buildlock upgrade says it drains, and for
// what; bad flags are usage errors.
func TestUpgradeCommand(t *testing.T) {
	t.Parallel()
	f := newStatusFixture(t)
	f.putState(t, statusState(t))
	_, err := f.em.PutFile(statusOwner, statusRepo, "main", "locks/"+statusLock+".config.json",
		[]byte(`{"maxHolders": 4, "runnerSerialization": true, "resourceLifecycle": true, "accountHealth": true, "fencedAdmission": true}`))
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	deps := statusDeps{getenv: func(k string) string { return f.env[k] }, transport: f.em.Transport(), clock: f.clk}
	err = upgradeCommand(context.Background(), []string{"--repo", statusOwner + "/" + statusRepo, "--lock", statusLock, "--token-env", "LOCK_READER_TOKEN"}, &out, &errOut, deps)
	require.NoError(t, err, errOut.String())
	text := out.String()
	assert.Contains(t, text, "Lock unity-seats: schema 5; the config asks for schema 6 (fencedAdmission). Draining")
	assert.Contains(t, text, "holders left: 2")
	assert.Contains(t, text, "incident")
	assert.NotContains(t, text, statusToken)
	for _, args := range [][]string{{}, {"--repo", "x"}, {"--repo", "a/b"}, {"--repo", "a/b", "--lock", "l", "--format", "markdown"}} {
		err := upgradeCommand(context.Background(), args, &out, &errOut, deps)
		assert.True(t, errors.Is(err, errUsage), "%v: %v", args, err)
	}
}
