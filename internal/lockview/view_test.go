package lockview_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// busyState is a schema-5 lock with two holders (one past its lease), two
// queued jobs, a live cooldown, an expired cooldown, a quarantine and an
// active incident. It is built directly: Build does not validate.
func busyState() *lockstate.State {
	ts := func(d time.Duration) string { return lockstate.FormatTime(now.Add(d)) }
	entry := func(run, job, runner string, queued time.Duration) lockstate.Entry {
		return lockstate.Entry{HolderID: "acme/game:" + run + ":" + job + ":default", Repository: "acme/game", Workflow: "Unity CI", Job: job,
			RunID: run, RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/" + run, QueuedAt: ts(queued), RunnerID: runner}
	}
	h1 := lockstate.Holder{Entry: entry("101", "build-linux", "unity-linux-01", -25*time.Minute), AcquiredAt: ts(-20 * time.Minute), ExpiresAt: ts(220 * time.Minute)}
	h1.JobID = "5001"
	h2 := lockstate.Holder{Entry: entry("102", "build | <b>mac</b> @team", "unity-mac-01", -5*time.Hour), AcquiredAt: ts(-4*time.Hour - 30*time.Minute), ExpiresAt: ts(-30 * time.Minute)}
	h2.RunAttempt = "2"
	res := func(id, state, runner string, created time.Duration, avail string) lockstate.Reservation {
		return lockstate.Reservation{ReservationID: id, HolderID: "acme/tools:90:test:default", Repository: "acme/tools", Workflow: "CI", Job: "test",
			RunID: "90", RunAttempt: "1", RunURL: "https://github.com/acme/tools/actions/runs/90", RunnerID: runner,
			Reason: "release cleanup was not proven resource-safe", State: state, CreatedAt: ts(created), AvailableAt: avail}
	}
	inc, err := lockstate.IncidentFor(lockstate.Identity{Repository: "acme/game", Workflow: "Unity CI", Job: "build-windows", RunID: "99",
		RunAttempt: "1", RunnerID: "unity-win-03"}, now.Add(-42*time.Minute), "https://github.com")
	if err != nil {
		panic(err)
	}
	return &lockstate.State{
		SchemaVersion: 5, Lock: "unity-seats", UpdatedAt: ts(-time.Minute),
		Holders: []lockstate.Holder{h1, h2},
		Queue:   []lockstate.Entry{entry("103", "build-ios", "unity-mac-02", -12*time.Minute), entry("104", "build-linux", "unity-linux-02", -90*time.Second)},
		Reservations: []lockstate.Reservation{
			res("7b0c1d2e-0000-4000-8000-000000000001", lockstate.ReservationCooldown, "unity-linux-03", -2*time.Minute, ts(4*time.Minute)),
			res("7b0c1d2e-0000-4000-8000-000000000002", lockstate.ReservationQuarantine, "unity-win-01", -3*time.Hour, ""),
			res("7b0c1d2e-0000-4000-8000-000000000003", lockstate.ReservationCooldown, "unity-win-02", -10*time.Minute, ts(-4*time.Minute)),
		},
		ActiveIncident: inc,
	}
}

func busyOptions() lockview.Options {
	return lockview.Options{Repository: "acme/build-lock", Branch: "lock-state", Now: now,
		Config: lockstate.Config{MaxHolders: 4, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, ReleaseCooldownSeconds: 360},
		FencingToken: func(_ *lockstate.State, holderID string) string {
			if strings.Contains(holderID, ":101:") {
				return "41"
			}
			return ""
		}}
}

func TestGolden(t *testing.T) {
	t.Parallel()
	empty := lockstate.Empty("unity-seats")
	empty.UpdatedAt = lockstate.FormatTime(now.Add(-time.Hour))
	cases := []struct {
		name  string
		state *lockstate.State
		opts  lockview.Options
	}{
		{"busy", busyState(), busyOptions()},
		{"empty", empty, lockview.Options{Repository: "acme/build-lock", Branch: "lock-state", Now: now, Config: lockstate.DefaultConfig()}},
	}
	for _, tc := range cases {
		for _, format := range []string{lockview.FormatTable, lockview.FormatJSON, lockview.FormatMarkdown} {
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				t.Parallel()
				var b bytes.Buffer
				require.NoError(t, lockview.Render(&b, lockview.Build(tc.state, tc.opts), format))
				ext := map[string]string{"table": "txt", "json": "json", "markdown": "md"}[format]
				checkGolden(t, filepath.Join("testdata", tc.name+"."+ext), b.Bytes())
			})
		}
	}
}

func TestBuildArithmetic(t *testing.T) {
	t.Parallel()
	v := lockview.Build(busyState(), busyOptions())
	assert.Equal(t, lockview.Seats{Max: 4, Holders: 2, Reservations: 2, Free: 0, Queued: 2}, v.Seats)
	require.Len(t, v.Holders, 2)
	assert.EqualValues(t, 20*60, *v.Holders[0].AgeSeconds)
	assert.EqualValues(t, 220*60, *v.Holders[0].LeaseLeftSeconds)
	assert.EqualValues(t, -30*60, *v.Holders[1].LeaseLeftSeconds)
	assert.Equal(t, "41", v.Holders[0].FencingToken)
	assert.Empty(t, v.Holders[1].FencingToken)
	assert.EqualValues(t, 12*60, *v.Queue[0].WaitSeconds)
	assert.Equal(t, 2, v.Queue[1].Position)
	assert.EqualValues(t, 4*60, *v.Reservations[0].TimeLeftSeconds)
	assert.True(t, v.Reservations[2].Expired)
	assert.Contains(t, v.Reservations[1].RecoveryCommand, "-f operation=recover -f reservation-id=7b0c1d2e-0000-4000-8000-000000000002 -f resource-safe=true")
	require.NotNil(t, v.Incident)
	assert.Equal(t, "gh workflow run recover-build-lock.yml --repo acme/build-lock -f operation=recover-incident -f incident-id="+
		v.Incident.IncidentID+" -f portal-cleanup-confirmed=true", v.Incident.RecoveryCommand)

	// JSON is the View.
	var b bytes.Buffer
	require.NoError(t, lockview.RenderJSON(&b, v))
	var back lockview.View
	require.NoError(t, json.Unmarshal(b.Bytes(), &back))
	assert.Equal(t, v.Seats, back.Seats)
	assert.Equal(t, v.Incident, back.Incident)
}

func TestDefaultFencingTokenIsEmptyBeforeSchema6(t *testing.T) {
	t.Parallel()
	opts := busyOptions()
	opts.FencingToken = nil
	v := lockview.Build(busyState(), opts)
	for _, h := range v.Holders {
		assert.Empty(t, h.FencingToken)
	}
}

func TestUntrustedTextIsInert(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, lockview.RenderMarkdown(&b, lockview.Build(busyState(), busyOptions())))
	md := b.String()
	assert.NotContains(t, md, "<b>")
	assert.NotContains(t, md, "@team")
	assert.Contains(t, md, `build \| &lt;b&gt;mac&lt;/b&gt; &#64;team`)
	g := lockview.Gantt(lockview.Build(busyState(), busyOptions()))
	for _, line := range strings.Split(g, "\n") {
		if i := strings.Index(line, " :"); i > 0 {
			assert.NotContains(t, line[:i], ":", line)
			assert.NotContains(t, line[:i], "#", line)
			assert.NotContains(t, line[:i], ";", line)
		}
	}
}

func TestDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", 185 * time.Second: "3m05s", 2*time.Hour + 7*time.Minute: "2h07m",
		76 * time.Hour: "3d04h", -90 * time.Second: "1m30s",
	} {
		assert.Equal(t, want, lockview.Duration(d))
	}
}

func TestRenderRejectsUnknownFormat(t *testing.T) {
	t.Parallel()
	err := lockview.Render(&bytes.Buffer{}, lockview.View{}, "yaml")
	assert.ErrorContains(t, err, "unknown format")
}

// checkGolden compares got with the golden file; UPDATE_GOLDEN=1
// regenerates it.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; regenerate with: UPDATE_GOLDEN=1 go test ./internal/lockview/")
	assert.Equal(t, string(want), string(got), "golden mismatch for %s; regenerate with: UPDATE_GOLDEN=1 go test ./internal/lockview/", path)
}
