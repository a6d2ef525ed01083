package bench

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestNoticedHandoffs: a seat freed while a job waits outside the queue (a
// paced first write, a join backing off) is a handoff from the free to the
// next admission's notice, like a direct handoff to a queued waiter; a seat
// that was free before anyone waited is not one, and a free seat stops
// counting once nobody waits.
func TestNoticedHandoffs(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	job := func(id string, arrival, admitted float64) *simJob {
		j := &simJob{holderID: id, arrival: time.Duration(arrival * float64(time.Second))}
		if admitted >= 0 {
			j.admitted = at(admitted)
		}
		return j
	}
	version := func(t *testing.T, sec float64, holders []string, queue ...string) checker.Version {
		s := lockstate.Empty(simLock)
		for _, id := range holders {
			s.Holders = append(s.Holders, lockstate.Holder{Entry: lockstate.Entry{HolderID: id, RunnerID: "r-" + id, QueuedAt: lockstate.FormatTime(t0)},
				AcquiredAt: lockstate.FormatTime(t0), ExpiresAt: lockstate.FormatTime(t0.Add(time.Hour))})
		}
		for _, id := range queue {
			s.Queue = append(s.Queue, lockstate.Entry{HolderID: id, RunnerID: "r-" + id, QueuedAt: lockstate.FormatTime(t0)})
		}
		s.UpdatedAt = lockstate.FormatTime(at(sec))
		data, err := lockstate.Encode(s)
		require.NoError(t, err)
		return checker.Version{Time: at(sec), Content: data}
	}
	w := &world{start: t0, cfg: lockstate.Config{MaxHolders: 2}}
	type gap struct {
		id  string
		gap float64
	}
	for _, tc := range []struct {
		name     string
		jobs     []*simJob
		versions func(t *testing.T) []checker.Version
		want     []gap
	}{{
		name: "direct handoff to a queued waiter: the waiter's notice alone",
		jobs: []*simJob{job("a", 0, 1), job("b", 0, 2), job("c", 0.5, 11.5)},
		versions: func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, nil), version(t, 1, []string{"a"}), version(t, 2, []string{"a", "b"}, "c"),
				version(t, 10, []string{"b", "c"}), version(t, 20, []string{"c"}), version(t, 30, nil)}
		},
		want: []gap{{"c", 1.5}},
	}, {
		name: "a seat freed while a paced job sleeps outside the queue: free to its notice",
		jobs: []*simJob{job("a", 0, 1), job("b", 0, 2), job("c", 0.5, 17)},
		versions: func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, nil), version(t, 1, []string{"a"}), version(t, 2, []string{"a", "b"}),
				version(t, 10, []string{"b"}), version(t, 16.5, []string{"b", "c"}), version(t, 20, []string{"c"}), version(t, 30, nil)}
		},
		want: []gap{{"c", 7}},
	}, {
		name: "a seat free before anyone waited is the job's own acquire, not a handoff",
		jobs: []*simJob{job("a", 0, 1), job("b", 5, 6.2)},
		versions: func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, nil), version(t, 1, []string{"a"}), version(t, 6, []string{"a", "b"}),
				version(t, 10, []string{"b"}), version(t, 20, nil)}
		},
	}, {
		name: "an admission takes the seat freed while someone waited, before one free before",
		// a's seat frees at 8 with nobody waiting; c arrives at 9, b's
		// seat frees at 10, c is admitted at 11.8 and notices at 12.
		jobs: []*simJob{job("a", 0, 1), job("b", 0, 2), job("c", 9, 12), job("d", 40, 41)},
		versions: func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, nil), version(t, 1, []string{"a"}), version(t, 2, []string{"a", "b"}),
				version(t, 8, []string{"b"}), version(t, 10, nil), version(t, 11.8, []string{"c"}), version(t, 40.8, []string{"c", "d"})}
		},
		want: []gap{{"c", 2}},
	}, {
		name: "a seat freed while someone waited stops counting once nobody waits",
		// Two seats free at 10 while c waits; c takes one, then nobody
		// waits; d arrives at 40 and takes the other by its own acquire.
		jobs: []*simJob{job("a", 0, 1), job("b", 0, 2), job("c", 5, 12), job("d", 40, 41)},
		versions: func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, nil), version(t, 1, []string{"a"}), version(t, 2, []string{"a", "b"}),
				version(t, 10, nil), version(t, 11.8, []string{"c"}), version(t, 40.8, []string{"c", "d"})}
		},
		want: []gap{{"c", 2}},
	}, {
		name: "two seats freed while two wait: each admission takes the oldest free",
		jobs: []*simJob{job("a", 0, 1), job("b", 0, 2), job("c", 0.1, 13), job("d", 0.2, 14)},
		versions: func(t *testing.T) []checker.Version {
			return []checker.Version{version(t, 0, nil), version(t, 1, []string{"a"}), version(t, 2, []string{"a", "b"}),
				version(t, 10, []string{"b"}), version(t, 11, nil), version(t, 12.5, []string{"c"}), version(t, 13.5, []string{"c", "d"})}
		},
		want: []gap{{"c", 3}, {"d", 3}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got []gap
			for _, h := range noticedHandoffs(w, tc.jobs, tc.versions(t), t0, at(3600)) {
				got = append(got, gap{h.holderID, h.gap.Seconds()})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
