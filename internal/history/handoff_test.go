package history

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// schema3 is the configuration at which releases hand seats off directly.
func schema3(seats int) lockstate.Config {
	return lockstate.Config{MaxHolders: seats, RunnerSerialization: true}
}

func newHist3(t *testing.T, c lockstate.Config) *hist {
	s := lockstate.Empty(lockName)
	s.SchemaVersion = 3
	h := &hist{t: t, cfg: c, now: t0, author: writer}
	h.commit(s, "Bootstrap")
	return h
}

// releaseWithHandoff is what the release action writes at schema <= 3:
// the release, then lockstate.Handoff in the same write.
func releaseWithHandoff(s *lockstate.State, c lockstate.Config, id lockstate.Identity, now time.Time) (*lockstate.State, []string, error) {
	next, dec, err := lockstate.Cleanup(s, c, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
		Report: confirmed, ReservationID: "res", Identity: id, ServerURL: lockstate.DefaultServerURL}, now)
	if err != nil || !dec.Changed {
		return nil, nil, err
	}
	if dec.Released && lockstate.HandoffAllowed(next) {
		after, h, err := lockstate.Handoff(next, c, now)
		if err != nil {
			return nil, nil, err
		}
		if h.Changed {
			return after, h.Admitted, nil
		}
	}
	return next, nil, nil
}

func TestVerifyHandoffAndArrivalInsertion(t *testing.T) {
	t.Parallel()
	h := newHist3(t, schema3(1))
	h.acquire(1) // admitted
	// 2 and 3 arrive together; 3's join lands first, 2's is inserted ahead
	// of it by arrival (2 read the state before 3 joined).
	arrival := lockstate.NewArrival(h.state)
	id2, id3 := ident(2), ident(3)
	id2.QueuedAt, id3.QueuedAt = h.now, h.now.Add(time.Second)
	next, dec, err := lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id3, Lease: time.Hour}, h.now.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, lockstate.OutcomeQueued, dec.Outcome)
	h.commit(next, "Acquire")
	next, dec, err = lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id2, Lease: time.Hour, Arrival: arrival}, h.now)
	require.NoError(t, err)
	require.True(t, dec.Inserted)
	h.commit(next, "Acquire")
	require.Equal(t, []string{id2.HolderID, id3.HolderID}, []string{h.state.Queue[0].HolderID, h.state.Queue[1].HolderID})

	id1 := ident(1)
	next, admitted, err := releaseWithHandoff(h.state, h.cfg, id1, h.now)
	require.NoError(t, err)
	require.Equal(t, []string{id2.HolderID}, admitted)
	h.commit(next, "Release")

	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	var kinds []string
	for _, s := range res.Steps {
		kinds = append(kinds, string(s.Kind)+":"+s.Result)
	}
	assert.Equal(t, []string{"bootstrap:bootstrap", "acquire:admitted", "acquire:queued", "acquire:inserted", "release:released+handoff"}, kinds)
}

func TestVerifyRefusesAJoinAheadOfAnEarlierArrival(t *testing.T) {
	t.Parallel()
	h := newHist3(t, schema3(1))
	h.acquire(1)
	h.acquire(2) // queued at h.now (minute 1)
	// 3 arrives a minute later and writes itself ahead of 2: no arrival
	// snapshot reproduces that (2's queuedAt is earlier than 3's).
	id3 := ident(3)
	id3.QueuedAt = h.now
	bad := h.planted(func(s *lockstate.State) {
		e := lockstate.Entry{HolderID: id3.HolderID, Repository: id3.Repository, Workflow: id3.Workflow, Job: id3.Job,
			RunID: id3.RunID, RunAttempt: id3.RunAttempt, RunURL: id3.RunURL, RunnerID: id3.RunnerID, QueuedAt: lockstate.FormatTime(id3.QueuedAt)}
		s.Queue = append([]lockstate.Entry{e}, s.Queue...)
	})
	res := Verify(h.input())
	require.NotEqual(t, StatusClean, res.Status)
	assert.Equal(t, bad, res.FirstViolation.Commit)
}

func TestVerifyRefusesAHandoffThatSkipsTheHead(t *testing.T) {
	t.Parallel()
	h := newHist3(t, schema3(1))
	h.acquire(1)
	h.acquire(2)
	h.acquire(3)
	// The release hands the seat to 3, the second waiter.
	id1 := ident(1)
	next, _, err := releaseWithHandoff(h.state, h.cfg, id1, h.now)
	require.NoError(t, err)
	skipped := next.Clone()
	skipped.Queue = []lockstate.Entry{next.Holders[0].Entry}
	e := h.state.Queue[1]
	skipped.Holders[0] = lockstate.Holder{Entry: e, AcquiredAt: next.Holders[0].AcquiredAt, ExpiresAt: next.Holders[0].ExpiresAt}
	bad := h.commit(skipped, "Release")
	res := Verify(h.input())
	require.NotEqual(t, StatusClean, res.Status)
	assert.Equal(t, bad, res.FirstViolation.Commit)
}

// TestPropertyHandoffHistoriesVerifyClean: every schema-3 history the
// suite's release and acquire actions write (direct handoff in releases,
// arrival insertion in joins, reaper drops) verifies clean.
func TestPropertyHandoffHistoriesVerifyClean(t *testing.T) {
	t.Parallel()
	var handoffs, insertions int
	// Until the generator has reached both new kinds of write: under -short
	// rapid runs a fifth of its checks, and one batch may reach neither.
	for round := 0; round < 10 && (handoffs == 0 || insertions == 0); round++ {
		checkHandoffHistories(t, &handoffs, &insertions)
	}
	// The generator reaches both new kinds of write.
	assert.Positive(t, handoffs, "handoff releases verified")
	assert.Positive(t, insertions, "arrival insertions verified")
}

// checkHandoffHistories is one rapid batch of
// TestPropertyHandoffHistoriesVerifyClean, counting the handoff releases
// and arrival insertions it verified.
func checkHandoffHistories(t *testing.T, handoffs, insertions *int) {
	rapid.Check(t, func(rt *rapid.T) {
		c := schema3(rapid.IntRange(1, 3).Draw(rt, "seats"))
		h := &hist{t: &testing.T{}, cfg: c, now: t0, author: writer}
		s := lockstate.Empty(lockName)
		s.SchemaVersion = 3
		h.state = s
		h.commitR(rt, s, "Bootstrap")
		arrivals := map[int]*lockstate.Arrival{}
		started := map[int]time.Time{}
		ids := func(n int) lockstate.Identity {
			id := ident(n)
			id.RunnerID = "r" + strconv.Itoa(n%3)
			if at, ok := started[n]; ok {
				id.QueuedAt = at
			} else {
				id.QueuedAt = h.now
			}
			return id
		}
		for range rapid.IntRange(5, 40).Draw(rt, "steps") {
			h.now = h.now.Add(time.Duration(rapid.IntRange(1, 120).Draw(rt, "dt")) * time.Second)
			n := rapid.IntRange(1, 6).Draw(rt, "job")
			var next *lockstate.State
			var err error
			msg := "Acquire"
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0: // a job arrives: it reads the state, joins later
				if _, ok := started[n]; !ok {
					started[n], arrivals[n] = h.now, lockstate.NewArrival(h.state)
				}
			case 1, 2: // a started job's acquire write (join, admission, poll)
				if _, ok := started[n]; !ok {
					continue
				}
				var dec lockstate.AcquireDecision
				next, dec, err = lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: ids(n), Lease: time.Hour, Arrival: arrivals[n]}, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
			case 3, 4:
				next, _, err = releaseWithHandoff(h.state, h.cfg, ids(n), h.now)
				msg = "Release"
				if err == nil && next != nil {
					delete(started, n)
					delete(arrivals, n)
				}
			case 5:
				var req lockstate.ReapRequest
				for _, e := range h.state.Queue {
					if rapid.Bool().Draw(rt, "drop") {
						req.Queue = append(req.Queue, lockstate.QueueEvidence{Entry: e, Evidence: lockstate.Evidence{Run: lockstate.RunEvidence{Known: true, Status: "completed", RunAttempt: e.RunAttempt}}})
					}
				}
				var dec lockstate.ReapDecision
				next, dec, err = lockstate.Reap(h.state, h.cfg, req, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
				msg = "Reap stale state"
			}
			if err != nil || next == nil {
				continue
			}
			h.commitR(rt, next, msg)
		}
		in := Input{Lock: lockName, StartProven: true, Versions: h.vs, Writers: []string{writer}, Operators: []string{operator}, LeaseGrace: time.Minute,
			Configs: []ConfigVersion{{SHA: sha(90000), Time: t0.Add(-time.Hour), Config: c}}}
		res := Verify(in)
		if res.Status != StatusClean {
			f := res.FirstViolation
			rt.Fatalf("a handoff history has a finding: %s at %s: %s\nbefore: %s\nafter: %s", f.Rule, f.Commit, f.Detail, f.Before, f.After)
		}
		for _, st := range res.Steps {
			switch st.Result {
			case "released+handoff":
				*handoffs++
			case "inserted":
				*insertions++
			}
		}
	})
}
