package checker_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

var t0 = time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)

func entry(n int, runner string) lockstate.Entry {
	return lockstate.Entry{
		HolderID: fmt.Sprintf("acme/game:%d:build:default", n), Repository: "acme/game", Workflow: "CI", Job: "build",
		RunID: fmt.Sprint(n), RunAttempt: "1", RunURL: fmt.Sprintf("https://github.com/acme/game/actions/runs/%d", n),
		QueuedAt: "2026-12-02T10:00:00.000Z", RunnerID: runner,
	}
}

func holder(n int, runner string) lockstate.Holder {
	return lockstate.Holder{Entry: entry(n, runner), AcquiredAt: "2026-12-02T10:00:01.000Z", ExpiresAt: "2026-12-02T14:00:01.000Z"}
}

// version encodes a state with the given holders and queue at t0+sec.
func version(t *testing.T, sec int, schema int, holders []lockstate.Holder, queue []lockstate.Entry) checker.Version {
	t.Helper()
	s := lockstate.Empty("seats")
	s.SchemaVersion = schema
	s.Holders, s.Queue = holders, queue
	s.UpdatedAt = lockstate.FormatTime(t0.Add(time.Duration(sec) * time.Second))
	data, err := lockstate.Encode(s)
	require.NoError(t, err)
	return checker.Version{Time: t0.Add(time.Duration(sec) * time.Second), Content: data, Message: fmt.Sprintf("v@%ds", sec)}
}

func removal(n int, sec int) checker.Removal {
	return checker.Removal{HolderID: entry(n, "").HolderID, At: t0.Add(time.Duration(sec) * time.Second)}
}

func TestCleanHistoryPassesAndMeasuresHandoff(t *testing.T) {
	t.Parallel()
	vs := []checker.Version{
		version(t, 0, 3, []lockstate.Holder{holder(1, "r1")}, nil),
		version(t, 1, 3, []lockstate.Holder{holder(1, "r1")}, []lockstate.Entry{entry(2, "r2")}),
		version(t, 10, 3, nil, []lockstate.Entry{entry(2, "r2")}),
		version(t, 12, 3, []lockstate.Holder{holder(2, "r2")}, nil),
		version(t, 20, 3, nil, nil),
	}
	rep := checker.Check(vs, checker.Input{Lock: "seats", MaxHolders: 1, Removals: []checker.Removal{removal(1, 9), removal(2, 19)}})
	assert.True(t, rep.OK(), rep.Violations)
	assert.Equal(t, []time.Duration{2 * time.Second}, rep.HandoffGaps)
	require.Len(t, rep.Admissions, 2)
	assert.Equal(t, entry(2, "").HolderID, rep.Admissions[1].HolderID)
	// Waiting from 1s to 12s: the seat was busy 1→10 and idle 10→12.
	assert.InDelta(t, 9.0/11.0, rep.Utilization, 1e-9)
}

func TestViolationsAreDetected(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		versions func(t *testing.T) []checker.Version
		max      int
		removals []checker.Removal
		want     string
	}{
		{"over-admission", func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, 3, []lockstate.Holder{holder(1, "r1"), holder(2, "r2")}, nil)}
		}, 1, nil, "exceed maxHolders"},
		{"same-runner FIFO", func(t *testing.T) []checker.Version {
			return []checker.Version{
				version(t, 0, 3, nil, []lockstate.Entry{entry(1, "r1"), entry(2, "r1")}),
				version(t, 1, 3, []lockstate.Holder{holder(2, "r1")}, []lockstate.Entry{entry(1, "r1")}),
			}
		}, 2, nil, "on the same runner"},
		{"displaced earlier waiter", func(t *testing.T) []checker.Version {
			return []checker.Version{
				version(t, 0, 3, nil, []lockstate.Entry{entry(1, "r1"), entry(2, "r2")}),
				version(t, 1, 3, []lockstate.Holder{holder(2, "r2")}, []lockstate.Entry{entry(1, "r1")}),
			}
		}, 1, nil, "admissible earlier waiter"},
		{"lost queue entry", func(t *testing.T) []checker.Version {
			return []checker.Version{
				version(t, 0, 3, nil, []lockstate.Entry{entry(1, "r1")}),
				version(t, 1, 3, nil, nil),
			}
		}, 1, nil, "lost without admission"},
		{"removal before its owner asked", func(t *testing.T) []checker.Version {
			return []checker.Version{
				version(t, 0, 3, []lockstate.Holder{holder(1, "r1")}, nil),
				version(t, 5, 3, nil, nil),
			}
		}, 1, []checker.Removal{removal(1, 6)}, "without an authorized removal"},
		{"schema downgrade", func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, 3, nil, nil), version(t, 1, 2, nil, nil)}
		}, 1, nil, "downgraded"},
		{"deleted file", func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, 3, nil, nil), {Time: t0.Add(time.Second), Message: "delete"}}
		}, 1, nil, "deleted"},
		{"undecodable version", func(t *testing.T) []checker.Version {
			return []checker.Version{{Time: t0, Content: []byte("{}"), Message: "garbage"}}
		}, 1, nil, "does not decode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := checker.Check(tc.versions(t), checker.Input{Lock: "seats", MaxHolders: tc.max, Removals: tc.removals})
			require.False(t, rep.OK())
			assert.True(t, strings.Contains(strings.Join(rep.Violations, "\n"), tc.want), rep.Violations)
		})
	}
}

func TestSerializedSkipOfABusyRunnerIsAllowed(t *testing.T) {
	t.Parallel()
	vs := []checker.Version{
		version(t, 0, 3, []lockstate.Holder{holder(9, "r1")}, []lockstate.Entry{entry(1, "r1"), entry(2, "r2")}),
		version(t, 1, 3, []lockstate.Holder{holder(9, "r1"), holder(2, "r2")}, []lockstate.Entry{entry(1, "r1")}),
	}
	rep := checker.Check(vs, checker.Input{Lock: "seats", MaxHolders: 2})
	assert.True(t, rep.OK(), rep.Violations)
	require.Len(t, rep.Admissions, 2)
	assert.Equal(t, 1, rep.Admissions[1].Overtook)
}

func TestPercentile(t *testing.T) {
	t.Parallel()
	ds := []time.Duration{5, 1, 3, 2, 4}
	assert.Equal(t, time.Duration(3), checker.Percentile(ds, 50))
	assert.Equal(t, time.Duration(5), checker.Percentile(ds, 95))
	assert.Equal(t, time.Duration(0), checker.Percentile(nil, 50))
}

func TestSameRunnerReclaimDisplacesNobody(t *testing.T) {
	t.Parallel()
	quarantine := func(runner string) lockstate.Reservation {
		e := entry(9, runner)
		return lockstate.Reservation{ReservationID: "q-1", HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow,
			Job: e.Job, RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: runner,
			Reason: "scheduled stale reaping: holder run is completed", State: lockstate.ReservationQuarantine,
			CreatedAt: "2026-12-02T10:00:00.000Z"}
	}
	v := func(sec int, holders []lockstate.Holder, queue []lockstate.Entry, res []lockstate.Reservation) checker.Version {
		s := lockstate.Empty("seats")
		s.SchemaVersion = 4
		s.Holders, s.Queue, s.Reservations = holders, queue, res
		s.UpdatedAt = lockstate.FormatTime(t0.Add(time.Duration(sec) * time.Second))
		data, err := lockstate.Encode(s)
		require.NoError(t, err)
		return checker.Version{Time: t0.Add(time.Duration(sec) * time.Second), Content: data, Message: "v"}
	}
	vs := []checker.Version{
		v(0, []lockstate.Holder{holder(1, "r1")}, []lockstate.Entry{entry(2, "r2"), entry(3, "r3")}, []lockstate.Reservation{quarantine("r3")}),
		// r3's job reclaims its runner's quarantine ahead of the waiter on r2.
		v(1, []lockstate.Holder{holder(1, "r1"), holder(3, "r3")}, []lockstate.Entry{entry(2, "r2")}, []lockstate.Reservation{}),
	}
	rep := checker.Check(vs, checker.Input{Lock: "seats", MaxHolders: 2})
	assert.True(t, rep.OK(), rep.Violations)
}

// Regression (simulation seed 50, R-S7): at schema 6 with maxOvertakes 0, a
// waiter whose runner is occupied only by its runner's quarantine may
// reclaim it at its own poll (spec §2.6); admitting a later waiter on a free
// runner first does not overtake it (lockstate scanQueue leaves it neither
// ranked nor blocked). A waiter behind a busy runner still counts.
func TestReclaimEligibleWaiterIsNotOvertaken(t *testing.T) {
	t.Parallel()
	quarantine := lockstate.Reservation{ReservationID: "q-1", HolderID: entry(9, "r0").HolderID, Repository: "acme/game", Workflow: "CI",
		Job: "build", RunID: "9", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/9", RunnerID: "r0",
		Reason: "release cleanup was not proven resource-safe", State: lockstate.ReservationQuarantine, CreatedAt: "2026-12-02T10:00:00.000Z"}
	v := func(sec int, holders []lockstate.Holder, queue []lockstate.Entry, res []lockstate.Reservation, fence int64) checker.Version {
		s := lockstate.Empty("seats")
		s.SchemaVersion = lockstate.FencedSchemaVersion
		s.Holders, s.Queue, s.Reservations, s.FencingToken = holders, queue, res, fence
		s.UpdatedAt = lockstate.FormatTime(t0.Add(time.Duration(sec) * time.Second))
		data, err := lockstate.Encode(s)
		require.NoError(t, err)
		return checker.Version{Time: t0.Add(time.Duration(sec) * time.Second), Content: data, Message: "Acquire seats"}
	}
	admitted := holder(2, "r1")
	admitted.FencingToken = 1
	in := checker.Input{Lock: "seats", MaxHolders: 4, MaxOvertakes: 0, CheckOvertakes: true}

	t.Run("reclaim-eligible", func(t *testing.T) {
		t.Parallel()
		vs := []checker.Version{
			v(0, nil, []lockstate.Entry{entry(1, "r0"), entry(2, "r1")}, []lockstate.Reservation{quarantine}, 0),
			v(1, []lockstate.Holder{admitted}, []lockstate.Entry{entry(1, "r0")}, []lockstate.Reservation{quarantine}, 1),
		}
		rep := checker.Check(vs, in)
		assert.True(t, rep.OK(), rep.Violations)
	})
	t.Run("busy runner", func(t *testing.T) {
		t.Parallel()
		busy := holder(8, "r0")
		busy.FencingToken = 1
		admitted := admitted
		admitted.FencingToken = 2
		vs := []checker.Version{
			v(0, []lockstate.Holder{busy}, []lockstate.Entry{entry(1, "r0"), entry(2, "r1")}, []lockstate.Reservation{}, 1),
			v(1, []lockstate.Holder{busy, admitted}, []lockstate.Entry{entry(1, "r0")}, []lockstate.Reservation{}, 2),
		}
		rep := checker.Check(vs, in)
		assert.Contains(t, strings.Join(rep.Violations, "\n"), "overtaken 1 times > maxOvertakes 0")
	})
}
