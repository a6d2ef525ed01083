package lockview_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
)

// seatsConfig is three serials, two kinds of license: pro-a-1 and pro-a-2
// carry pro, plus-1 carries plus (issue 25).
func seatsConfig() lockstate.Config {
	return lockstate.Config{MaxHolders: 3, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, MaxOvertakes: 2,
		Seats:    lockstate.NewSeatList([]lockstate.SeatConfig{{Name: "pro-a-1", Labels: []string{"pro"}}, {Name: "pro-a-2", Labels: []string{"pro"}}, {Name: "plus-1", Labels: []string{"plus"}}}),
		Priority: lockstate.PriorityConfig{Max: 9}}
}

// seatsState: pro-a-1 held by a class-5 pro job; plus-0, removed from the
// config, still held (draining); a quarantine on pro-a-2; plus-1 free,
// last used on a runner with a hostile name; three waiters with labels
// and classes, one with a hostile job name.
func seatsState() *lockstate.State {
	ts := func(d time.Duration) string { return lockstate.FormatTime(now.Add(d)) }
	entry := func(run, job, runner string, queued time.Duration) lockstate.Entry {
		return lockstate.Entry{HolderID: "acme/game:" + run + ":" + job + ":default", Repository: "acme/game", Workflow: "Unity CI", Job: job,
			RunID: run, RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/" + run, QueuedAt: ts(queued), RunnerID: runner}
	}
	h1 := lockstate.Holder{Entry: entry("201", "release", "unity-win-01", -30*time.Minute), AcquiredAt: ts(-25 * time.Minute), ExpiresAt: ts(95 * time.Minute), FencingToken: 7}
	h1.Seat, h1.Labels, h1.Priority = "pro-a-1", "pro", 5
	h2 := lockstate.Holder{Entry: entry("202", "build-plus", "unity-win-02", -50*time.Minute), AcquiredAt: ts(-45 * time.Minute), ExpiresAt: ts(75 * time.Minute), FencingToken: 6}
	h2.Seat, h2.Labels = "plus-0", "plus"
	w1 := entry("203", "build-pro", "unity-win-03", -12*time.Minute)
	w1.Labels, w1.Overtakes = "pro", 1
	w2 := entry("204", "build-plus", "unity-win-04", -8*time.Minute)
	w2.Labels = "plus"
	w3 := entry("205", "hotfix | <b>x</b> @team", "unity-win-05", -time.Minute)
	w3.Priority = 9
	q := lockstate.Reservation{ReservationID: "7b0c1d2e-0000-4000-8000-000000000009", HolderID: "acme/game:200:build:default", Repository: "acme/game",
		Workflow: "Unity CI", Job: "build", RunID: "200", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/200", RunnerID: "unity-win-06",
		Reason: "release cleanup was not proven resource-safe", State: lockstate.ReservationQuarantine, CreatedAt: ts(-2 * time.Hour), Seat: "pro-a-2"}
	return &lockstate.State{SchemaVersion: 6, Lock: "unity-seats", UpdatedAt: ts(-time.Minute), FencingToken: 7,
		Holders: []lockstate.Holder{h1, h2}, Queue: []lockstate.Entry{w1, w2, w3}, Reservations: []lockstate.Reservation{q},
		Seats: []lockstate.SeatUse{{Name: "pro-a-1", LastRunner: "unity-win-01", LastUsedAt: ts(-25 * time.Minute)},
			{Name: "plus-1", LastRunner: "evil|`runner` <b>", LastUsedAt: ts(-3 * time.Hour)}}}
}

func seatsOptions() lockview.Options {
	return lockview.Options{Repository: "acme/build-lock", Branch: "lock-state", Now: now, Config: seatsConfig()}
}

func TestSeatTable(t *testing.T) {
	t.Parallel()
	v := lockview.Build(seatsState(), seatsOptions())
	require.Len(t, v.SeatTable, 4)
	assert.Equal(t, lockview.SeatRow{Name: "pro-a-1", Labels: []string{"pro"}, State: lockview.SeatHeld, HolderID: "acme/game:201:release:default",
		RunURL: "https://github.com/acme/game/actions/runs/201", RunnerID: "unity-win-01", LastRunner: "unity-win-01", LastUsedAt: "2026-12-02T11:35:00.000Z"}, v.SeatTable[0])
	assert.Equal(t, lockview.SeatQuarantined, v.SeatTable[1].State)
	assert.Equal(t, "7b0c1d2e-0000-4000-8000-000000000009", v.SeatTable[1].ReservationID)
	assert.Equal(t, lockview.SeatRow{Name: "plus-1", Labels: []string{"plus"}, State: lockview.SeatFree, LastRunner: "evil|`runner` <b>", LastUsedAt: "2026-12-02T09:00:00.000Z"}, v.SeatTable[2])
	assert.Equal(t, "plus-0", v.SeatTable[3].Name, "a seat removed from the config but still held is listed after the config's")
	assert.Equal(t, lockview.SeatDraining, v.SeatTable[3].State)
	assert.Nil(t, v.SeatTable[3].Labels)
	assert.Equal(t, "acme/game:202:build-plus:default", v.SeatTable[3].HolderID)
	assert.Equal(t, lockview.Seats{Max: 3, Holders: 2, Reservations: 1, Free: 1, Draining: 1, Queued: 3}, v.Seats, "plus-1 is free; the draining seat does not count against the list")

	assert.Equal(t, "pro-a-1", v.Holders[0].SeatName)
	assert.Equal(t, []string{"pro"}, v.Holders[0].Labels)
	assert.Equal(t, 5, v.Holders[0].Priority)
	assert.Equal(t, "pro-a-2", v.Reservations[0].SeatName)
	assert.Equal(t, []string{"pro"}, v.Queue[0].Labels)
	assert.Equal(t, 1, v.Queue[0].Overtakes)
	assert.Nil(t, v.Queue[2].Labels)
	assert.Equal(t, 9, v.Queue[2].Priority)
}

func TestSeatTableCooldownExpiryAndAnonymousLocks(t *testing.T) {
	t.Parallel()
	s := seatsState()
	s.Reservations[0].State = lockstate.ReservationCooldown
	s.Reservations[0].AvailableAt = lockstate.FormatTime(now.Add(5 * time.Minute))
	v := lockview.Build(s, seatsOptions())
	assert.Equal(t, lockview.SeatReserved, v.SeatTable[1].State)
	assert.Equal(t, 1, v.Seats.Free)

	s.Reservations[0].AvailableAt = lockstate.FormatTime(now.Add(-time.Second))
	v = lockview.Build(s, seatsOptions())
	assert.Equal(t, lockview.SeatFree, v.SeatTable[1].State, "an expired cooldown frees its seat")
	assert.Empty(t, v.SeatTable[1].ReservationID)
	assert.Equal(t, 2, v.Seats.Free)

	anon := lockview.Build(busyState(), busyOptions())
	assert.Nil(t, anon.SeatTable, "no seat table when the config names no seats and nothing records one")
	var b bytes.Buffer
	require.NoError(t, lockview.RenderJSON(&b, anon))
	assert.NotContains(t, b.String(), "seatTable")
}

func TestSeatsGolden(t *testing.T) {
	t.Parallel()
	for _, format := range []string{lockview.FormatTable, lockview.FormatJSON, lockview.FormatMarkdown} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			require.NoError(t, lockview.Render(&b, lockview.Build(seatsState(), seatsOptions()), format))
			ext := map[string]string{"table": "txt", "json": "json", "markdown": "md"}[format]
			checkGolden(t, filepath.Join("testdata", "seats."+ext), b.Bytes())
		})
	}
}

func TestSeatsJSONFieldNames(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, lockview.RenderJSON(&b, lockview.Build(seatsState(), seatsOptions())))
	var doc struct {
		Seats     map[string]any   `json:"seats"`
		SeatTable []map[string]any `json:"seatTable"`
		Holders   []map[string]any `json:"holders"`
		Queue     []map[string]any `json:"queue"`
		Res       []map[string]any `json:"reservations"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.EqualValues(t, 1, doc.Seats["draining"])
	assert.Equal(t, "plus-1", doc.SeatTable[2]["name"])
	assert.Equal(t, "free", doc.SeatTable[2]["state"])
	assert.Equal(t, []any{"plus"}, doc.SeatTable[2]["labels"])
	assert.Equal(t, "evil|`runner` <b>", doc.SeatTable[2]["lastRunner"])
	assert.Equal(t, "pro-a-1", doc.Holders[0]["seatName"])
	assert.EqualValues(t, 1, doc.Holders[0]["seat"], "seat stays the holder's position")
	assert.EqualValues(t, 5, doc.Holders[0]["priority"])
	assert.Equal(t, []any{"pro"}, doc.Queue[0]["labels"])
	assert.EqualValues(t, 9, doc.Queue[2]["priority"])
	assert.Equal(t, "pro-a-2", doc.Res[0]["seatName"])
}

func TestSeatsUntrustedTextIsInert(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	require.NoError(t, lockview.RenderMarkdown(&b, lockview.Build(seatsState(), seatsOptions())))
	md := b.String()
	assert.NotContains(t, md, "<b>x</b>")
	assert.NotContains(t, md, "@team")
	assert.Contains(t, md, "| `pro-a-1` | `pro` | held |")
	assert.Contains(t, md, "`evil\\|'runner' <b>`", "a hostile last runner stays inside one code span (inert) and one cell")
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| `plus-1`") {
			assert.Equal(t, 8, strings.Count(line, "|")-strings.Count(line, "\\|"), "seven cells: %s", line)
		}
	}
	var tb bytes.Buffer
	require.NoError(t, lockview.RenderTable(&tb, lockview.Build(seatsState(), seatsOptions())))
	assert.Contains(t, tb.String(), "SEATS")
	assert.Contains(t, tb.String(), "plus-0   (removed)  draining")
}
