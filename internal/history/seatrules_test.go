package history

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// seatsCfg is the operator's lock of issue 25: three serials, two kinds of
// license (pro-a-1 and pro-a-2 carry pro, plus-1 carries plus), priority
// classes up to 9.
func seatsCfg() lockstate.Config {
	c := cfg(3)
	c.Seats = lockstate.NewSeatList([]lockstate.SeatConfig{{Name: "pro-a-1", Labels: []string{"pro"}}, {Name: "pro-a-2", Labels: []string{"pro"}}, {Name: "plus-1", Labels: []string{"plus"}}})
	c.Priority = lockstate.PriorityConfig{Max: 9}
	return c
}

// acquireSeat is one acquire (join, poll or admission) of job n asking for
// labels and a priority class; it commits when the core changed the state.
func (h *hist) acquireSeat(n int, labels string, priority int) lockstate.AcquireDecision {
	h.t.Helper()
	next, dec := h.tryAcquireSeat(h.state, h.cfg, n, labels, priority)
	if dec.Changed {
		h.commit(next, "Acquire")
	}
	return dec
}

func (h *hist) tryAcquireSeat(s *lockstate.State, c lockstate.Config, n int, labels string, priority int) (*lockstate.State, lockstate.AcquireDecision) {
	h.t.Helper()
	id := ident(n)
	id.QueuedAt = h.now
	if i := lockstate.QueuePosition(s, id.HolderID) - 1; i >= 0 {
		id.QueuedAt, _ = lockstate.ParseTime(s.Queue[i].QueuedAt)
	}
	l, err := lockstate.ParseLabelExpression(labels)
	require.NoError(h.t, err)
	next, dec, err := lockstate.Acquire(s, c, lockstate.AcquireRequest{Identity: id, Lease: time.Hour, Labels: l, Priority: priority}, h.now)
	require.NoError(h.t, err)
	return next, dec
}

// seatScene: every seat held (job 1 and 2 on the pro seats, job 3 on
// plus-1), job 4 waits for pro at class 0, job 5 for pro at class 5, and
// job 1 releases pro-a-1.
func seatScene(t *testing.T, c lockstate.Config) *hist {
	h := newHist(t, c)
	require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(1, "pro", 0).Outcome)
	require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(2, "pro", 0).Outcome)
	require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(3, "plus", 0).Outcome)
	require.Equal(t, lockstate.OutcomeQueued, h.acquireSeat(4, "pro", 0).Outcome)
	require.Equal(t, lockstate.OutcomeQueued, h.acquireSeat(5, "pro", 5).Outcome)
	h.release(1, confirmed)
	return h
}

func TestVerifySeatHistoryClean(t *testing.T) {
	t.Parallel()
	h := seatScene(t, seatsCfg())
	assert.Equal(t, lockstate.OutcomeQueued, h.acquireSeat(4, "pro", 0).Outcome, "the class-0 waiter polls first and still waits")
	dec := h.acquireSeat(5, "pro", 5)
	require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
	assert.Equal(t, "pro-a-1", dec.Seat)
	h.release(3, confirmed)
	assert.Equal(t, lockstate.OutcomeQueued, h.acquireSeat(4, "pro", 0).Outcome, "a freed plus seat never takes a pro waiter")
	require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(6, "plus", 0).Outcome)

	res := Verify(h.input())
	require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	assert.Equal(t, 5, res.Results["admitted"])
}

func TestVerifySeatRulesCatchPlantedHistories(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		rule  Rule
		build func(t *testing.T) Input
	}{{
		name: "two holders on one seat",
		rule: RuleSeatConflict,
		build: func(t *testing.T) Input {
			h := seatScene(t, seatsCfg())
			next, dec := h.tryAcquireSeat(h.state, h.cfg, 6, "plus", 0)
			require.Equal(t, lockstate.OutcomeQueued, dec.Outcome)
			// A writer that lost the seat check: job 6 takes plus-1 too.
			s := next.Clone()
			w := s.Queue[len(s.Queue)-1]
			s.Queue = s.Queue[:len(s.Queue)-1]
			s.FencingToken++
			s.Holders = append(s.Holders, lockstate.Holder{Entry: w, AcquiredAt: lockstate.FormatTime(h.now), ExpiresAt: lockstate.FormatTime(h.now.Add(time.Hour)), FencingToken: s.FencingToken})
			s.Holders[len(s.Holders)-1].Seat = "plus-2"
			s.UpdatedAt = lockstate.FormatTime(h.now)
			data, err := lockstate.Encode(s)
			require.NoError(t, err)
			data = []byte(strings.Replace(string(data), `"seat": "plus-2"`, `"seat": "plus-1"`, 1))
			h.vs = append(h.vs, Version{Commit: Commit{SHA: sha(len(h.vs) + 1), Parents: []string{h.vs[len(h.vs)-1].SHA}, Time: h.now, AuthorLogin: writer, Verified: true, Message: "Acquire"}, BlobSHA: blobSHA(data), Content: data})
			return h.input()
		},
	}, {
		name: "a plus job on a pro seat",
		rule: RuleSeatLabels,
		build: func(t *testing.T) Input {
			h := seatScene(t, seatsCfg())
			h.release(3, confirmed)
			next, dec := h.tryAcquireSeat(h.state, h.cfg, 6, "plus", 0)
			require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
			require.Equal(t, "plus-1", dec.Seat)
			s := next.Clone()
			s.Holders[len(s.Holders)-1].Seat = "pro-a-1"
			h.commit(s, "Acquire")
			return h.input()
		},
	}, {
		name: "a labelled job admitted without a seat",
		rule: RuleSeatLabels,
		build: func(t *testing.T) Input {
			h := seatScene(t, seatsCfg())
			next, dec := h.tryAcquireSeat(h.state, h.cfg, 5, "pro", 5)
			require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
			s := next.Clone()
			s.Holders[len(s.Holders)-1].Seat = ""
			h.commit(s, "Acquire")
			return h.input()
		},
	}, {
		name: "a priority inversion: class 0 takes the pro seat a class-5 waiter could use",
		rule: RulePriorityOrder,
		build: func(t *testing.T) Input {
			h := seatScene(t, seatsCfg())
			// The writer ignored classes: run the core as if job 5 were
			// class 0, then record the state with its real class.
			blind := h.state.Clone()
			for i := range blind.Queue {
				blind.Queue[i].Priority = 0
			}
			next, dec := h.tryAcquireSeat(blind, h.cfg, 4, "pro", 0)
			require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
			s := next.Clone()
			for i := range s.Queue {
				if s.Queue[i].HolderID == ident(5).HolderID {
					s.Queue[i].Priority = 5
				}
			}
			h.commit(s, "Acquire")
			return h.input()
		},
	}, {
		name: "a waiter at the overtaking bound passed",
		rule: RuleOvertakingBound,
		build: func(t *testing.T) Input {
			strict := seatsCfg()
			strict.MaxOvertakes = 0
			h := seatScene(t, strict)
			// Job 4 (class 0, queued first) is at the bound 0: the core
			// admits nobody past it. A writer with a looser bound did.
			loose := strict
			loose.MaxOvertakes = 2
			next, dec := h.tryAcquireSeat(h.state, loose, 5, "pro", 5)
			require.Equal(t, lockstate.OutcomeAdmitted, dec.Outcome)
			h.commit(next, "Acquire")
			return h.input()
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := Verify(tc.build(t))
			require.Equal(t, StatusViolations, res.Status)
			require.NotNil(t, res.FirstViolation)
			assert.Equal(t, tc.rule, res.FirstViolation.Rule, res.FirstViolation.Detail)
			assert.Equal(t, res.Commits, len(res.Steps))
			assert.Equal(t, sha(res.Commits), res.FirstViolation.Commit, "the planted write is the one named")
		})
	}
}

// TestVerifyPriorityOrderAllowsWhatThePlanAllows: a class-0 admission is no
// inversion when the higher-class waiter has another free seat, cannot use
// the seat, or is held back by a waiter at the overtaking bound.
func TestVerifyPriorityOrderAllowsWhatThePlanAllows(t *testing.T) {
	t.Parallel()
	t.Run("disjoint labels", func(t *testing.T) {
		t.Parallel()
		h := seatScene(t, seatsCfg())
		h.release(3, confirmed)
		// Job 6 (plus, class 0) takes plus-1 while job 5 (pro, class 5) waits.
		require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(6, "plus", 0).Outcome)
		res := Verify(h.input())
		require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	})
	t.Run("another free seat left", func(t *testing.T) {
		t.Parallel()
		h := seatScene(t, seatsCfg())
		h.release(2, confirmed)
		require.Equal(t, lockstate.OutcomeAdmitted, h.acquireSeat(4, "pro", 0).Outcome)
		res := Verify(h.input())
		require.Equal(t, StatusClean, res.Status, "%+v", res.FirstViolation)
	})
}

// TestPropertyCoreSeatHistoriesVerifyClean: histories written by the core
// with random named-seat configs (changed live), labels and classes verify
// clean: the seat rules never flag what lockstate.Acquire, Cleanup and Reap
// write.
func TestPropertyCoreSeatHistoriesVerifyClean(t *testing.T) {
	t.Parallel()
	labelSets := [][]string{{"pro"}, {"plus"}, {"plus", "pro"}, {"gpu"}, {"gpu", "pro"}}
	seatList := func(rt *rapid.T, label string) lockstate.SeatList {
		n := rapid.IntRange(1, 4).Draw(rt, label+"-n")
		seats := make([]lockstate.SeatConfig, n)
		for i := range seats {
			seats[i] = lockstate.SeatConfig{Name: "s" + strconv.Itoa(rapid.IntRange(0, 5).Draw(rt, label+"-name")*10+i), Labels: rapid.SampledFrom(labelSets).Draw(rt, label+"-labels")}
		}
		return lockstate.NewSeatList(seats)
	}
	rapid.Check(t, func(rt *rapid.T) {
		c := cfg(1)
		c.MaxOvertakes = rapid.IntRange(0, 2).Draw(rt, "overtakes")
		c.ReleaseCooldownSeconds = rapid.SampledFrom([]int{0, 30}).Draw(rt, "cooldown")
		c.Seats = seatList(rt, "seats")
		c.MaxHolders = c.Seats.Len()
		c.Priority = lockstate.PriorityConfig{Max: rapid.IntRange(0, 9).Draw(rt, "max")}
		h := &hist{t: &testing.T{}, cfg: c, now: t0, author: writer}
		s := lockstate.Empty(lockName)
		s.SchemaVersion, s.Reservations = 6, []lockstate.Reservation{}
		h.state = s
		h.commitR(rt, s, "Bootstrap")
		configs := []ConfigVersion{{SHA: sha(90000), Time: t0.Add(-time.Hour), Config: c}}
		want := map[int][]string{}
		class := map[int]int{}
		steps := rapid.IntRange(5, 40).Draw(rt, "steps")
		for range steps {
			h.now = h.now.Add(time.Duration(rapid.IntRange(1, 600).Draw(rt, "dt")) * time.Second)
			n := rapid.IntRange(1, 6).Draw(rt, "job")
			id := ident(n)
			id.RunnerID = "r" + strconv.Itoa(n%4)
			id.QueuedAt = h.now
			if i := lockstate.QueuePosition(h.state, id.HolderID) - 1; i >= 0 {
				id.QueuedAt, _ = lockstate.ParseTime(h.state.Queue[i].QueuedAt)
			}
			if _, ok := want[n]; !ok {
				want[n] = rapid.SampledFrom(append(labelSets, nil)).Draw(rt, "want")
				class[n] = rapid.IntRange(0, 9).Draw(rt, "class")
			}
			var next *lockstate.State
			var err error
			msg := ""
			h.author = writer
			switch rapid.IntRange(0, 8).Draw(rt, "op") {
			case 0, 1, 2, 3:
				var dec lockstate.AcquireDecision
				next, dec, err = lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Duration(rapid.IntRange(1, 90).Draw(rt, "lease")) * time.Minute,
					Labels: want[n], Priority: min(class[n], h.cfg.Priority.Max)}, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
				msg = "Acquire"
			case 4, 5:
				report := rapid.SampledFrom([]lockstate.Report{{}, confirmed}).Draw(rt, "report")
				var dec lockstate.CleanupDecision
				next, dec, err = lockstate.Cleanup(h.state, h.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
					Report: report, ReservationID: "res-" + strconv.Itoa(len(h.vs)), Identity: id, ServerURL: lockstate.DefaultServerURL}, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
				msg = "Release"
			case 6:
				var req lockstate.ReapRequest
				for _, hd := range h.state.Holders {
					req.Holders = append(req.Holders, lockstate.HolderEvidence{Holder: hd, ReservationID: "reap-" + strconv.Itoa(len(h.vs)) + hd.RunnerID,
						Evidence: lockstate.Evidence{Run: lockstate.RunEvidence{Known: true, Status: "completed", Conclusion: "failure", RunAttempt: hd.RunAttempt}}})
				}
				var dec lockstate.ReapDecision
				next, dec, err = lockstate.Reap(h.state, h.cfg, req, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
				msg = "Reap stale state"
			case 7:
				h.author = operator
				for _, r := range h.state.Reservations {
					if r.State == lockstate.ReservationQuarantine {
						next, _, err = lockstate.RecoverQuarantine(h.state, h.cfg, r.ReservationID, h.now)
						msg = "Recover reservation " + r.ReservationID
						break
					}
				}
			case 8:
				c2 := h.cfg
				c2.Seats = seatList(rt, "seats2")
				c2.MaxHolders = c2.Seats.Len()
				c2.Priority.Max = rapid.IntRange(0, 9).Draw(rt, "max2")
				h.cfg = c2
				configs = append(configs, ConfigVersion{SHA: sha(90000 + len(configs)), Time: h.now, Config: c2})
				h.now = h.now.Add(time.Second)
			}
			if err != nil || next == nil {
				continue
			}
			h.commitR(rt, next, msg)
		}
		res := Verify(Input{Lock: lockName, StartProven: true, Versions: h.vs, Configs: configs, Writers: []string{writer}, Operators: []string{operator}, LeaseGrace: time.Minute})
		if res.Status != StatusClean {
			f := res.FirstViolation
			rt.Fatalf("a core-written seat history has a finding: %s at %s: %s\nbefore: %s\nafter: %s", f.Rule, f.Commit, f.Detail, f.Before, f.After)
		}
	})
}
