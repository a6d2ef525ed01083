package history

import (
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestPropertyCoreHistoriesVerifyClean: every history the pure core can
// write verifies clean. Random jobs on a few runners acquire, poll, release
// with any report (confirmed, unproven, blocked), retract, give up; the
// reaper quarantines stale holders with any proof it can hold and drops
// finished waiters; operators recover quarantines and incidents; the clock
// jumps; the config's seats and cooldown change between writes. This is
// the completeness of the recognized-transition table: no write the core
// produces is ever a finding.
func TestPropertyCoreHistoriesVerifyClean(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		c := lockstate.Config{MaxHolders: rapid.IntRange(1, 3).Draw(rt, "seats"), RunnerSerialization: true, ResourceLifecycle: true,
			AccountHealth: true, FencedAdmission: true, MaxOvertakes: rapid.IntRange(0, 2).Draw(rt, "overtakes"),
			ReleaseCooldownSeconds: rapid.SampledFrom([]int{0, 30}).Draw(rt, "cooldown")}
		h := &hist{t: &testing.T{}, cfg: c, now: t0, author: writer}
		s := lockstate.Empty(lockName)
		s.SchemaVersion, s.Reservations = 5, []lockstate.Reservation{}
		h.state = s
		h.commitR(rt, s, "Bootstrap")
		configs := []ConfigVersion{{SHA: sha(90000), Time: t0.Add(-time.Hour), Config: c}}
		attempts := map[int]int{}
		ids := func(n int) lockstate.Identity {
			id := ident(n)
			id.RunnerID = "r" + strconv.Itoa(n%3)
			id.RunAttempt = strconv.Itoa(max(attempts[n], 1))
			id.QueuedAt = h.now
			return id
		}
		steps := rapid.IntRange(5, 40).Draw(rt, "steps")
		for range steps {
			h.now = h.now.Add(time.Duration(rapid.IntRange(1, 600).Draw(rt, "dt")) * time.Second)
			n := rapid.IntRange(1, 5).Draw(rt, "job")
			id := ids(n)
			var next *lockstate.State
			var err error
			msg := ""
			h.author = writer
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0, 1, 2:
				var dec lockstate.AcquireDecision
				next, dec, err = lockstate.Acquire(h.state, h.cfg, lockstate.AcquireRequest{Identity: id, Lease: time.Duration(rapid.IntRange(1, 90).Draw(rt, "lease")) * time.Minute}, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
				msg = "Acquire"
			case 3, 4:
				report := rapid.SampledFrom([]lockstate.Report{{}, confirmed,
					{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: "return-timeout"},
					{Status: lockstate.StatusUnknown, Health: lockstate.HealthBlocked, Reason: lockstate.ReasonAccountLimit}}).Draw(rt, "report")
				var dec lockstate.CleanupDecision
				next, dec, err = lockstate.Cleanup(h.state, h.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
					Report: report, ReservationID: "res-" + strconv.Itoa(len(h.vs)), Identity: id, ServerURL: lockstate.DefaultServerURL}, h.now)
				if err == nil && !dec.Changed {
					next = nil
				}
				msg = "Release"
			case 5:
				var dec lockstate.CleanupDecision
				next, dec, err = lockstate.Cleanup(h.state, h.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID,
					PreActivation: true}, h.now)
				if err == nil && (!dec.Changed || dec.Result == lockstate.ResultQueueCleaned) {
					next = nil // the retraction of a reclaim is covered by its own test
				}
				msg = "Release"
			case 6:
				var req lockstate.ReapRequest
				for _, hd := range h.state.Holders {
					ev := rapid.SampledFrom([]lockstate.Evidence{
						{Run: lockstate.RunEvidence{Known: true, Status: "completed", Conclusion: "failure", RunAttempt: hd.RunAttempt}},
						{Run: lockstate.RunEvidence{Known: true, Status: "in_progress", RunAttempt: "9"}},
						{Run: lockstate.RunEvidence{Known: true, Status: "in_progress", RunAttempt: hd.RunAttempt}, Job: lockstate.JobEvidence{Known: true, JobID: hd.JobID, Status: "completed"}},
						{},
					}).Draw(rt, "evidence")
					req.Holders = append(req.Holders, lockstate.HolderEvidence{Holder: hd, Evidence: ev, ReservationID: "reap-" + strconv.Itoa(len(h.vs)) + hd.RunnerID})
				}
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
			case 7:
				h.author = operator
				for _, r := range h.state.Reservations {
					if r.State == lockstate.ReservationQuarantine {
						next, _, err = lockstate.RecoverQuarantine(h.state, h.cfg, r.ReservationID, h.now)
						msg = "Recover reservation " + r.ReservationID
						break
					}
				}
				if inc := h.state.ActiveIncident; inc != nil && next == nil {
					next, _, err = lockstate.RecoverIncident(h.state, h.cfg, inc.IncidentID, h.now, "inc-"+strconv.Itoa(len(h.vs)))
					msg = "Recover global incident"
				}
			case 8:
				attempts[n] = max(attempts[n], 1) + 1 // a rerun
			case 9:
				c2 := h.cfg
				c2.MaxHolders = rapid.IntRange(1, 3).Draw(rt, "seats2")
				c2.ReleaseCooldownSeconds = rapid.SampledFrom([]int{0, 30}).Draw(rt, "cooldown2")
				h.cfg = c2
				configs = append(configs, ConfigVersion{SHA: sha(90000 + len(configs)), Time: h.now, Config: c2})
				h.now = h.now.Add(time.Second)
			}
			if err != nil || next == nil {
				continue
			}
			h.commitR(rt, next, msg)
		}
		in := Input{Lock: lockName, StartProven: true, Versions: h.vs, Configs: configs, Writers: []string{writer}, Operators: []string{operator}, LeaseGrace: time.Minute}
		res := Verify(in)
		if res.Status != StatusClean {
			f := res.FirstViolation
			rt.Fatalf("a core-written history has a finding: %s at %s: %s\nbefore: %s\nafter: %s", f.Rule, f.Commit, f.Detail, f.Before, f.After)
		}
	})
}

func (h *hist) commitR(rt *rapid.T, s *lockstate.State, msg string) {
	s = s.Clone()
	s.UpdatedAt = lockstate.FormatTime(h.now)
	data, err := lockstate.Encode(s)
	if err != nil {
		rt.Fatalf("encode: %v", err)
	}
	var parents []string
	if len(h.vs) > 0 {
		parents = []string{h.vs[len(h.vs)-1].SHA}
	}
	h.vs = append(h.vs, Version{Commit: Commit{SHA: sha(len(h.vs) + 1), Parents: parents, Time: h.now, AuthorLogin: h.author, Verified: h.author == writer, Message: msg}, BlobSHA: blobSHA(data), Content: data})
	h.state = s
}
