package lockstate

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// reapNow is when the reaper runs in these tests: one hour after t0, so a
// holder admitted at t0 with a one-hour lease has just expired.
var reapNow = t0.Add(2 * time.Hour)

// reapHolderFor is holder n on runner with jobID ("" = none), admitted at t0
// with lease expiring at expires.
func reapHolderFor(n int, runner, jobID string, expires time.Time) Holder {
	h := holderFor(ident(n, runner), 4)
	h.JobID = jobID
	h.ExpiresAt = FormatTime(expires)
	return h
}

func known(status, conclusion, attempt string) RunEvidence {
	return RunEvidence{Known: true, Status: status, Conclusion: conclusion, RunAttempt: attempt}
}

func job(id, status string) JobEvidence {
	return JobEvidence{Known: true, JobID: id, Status: status}
}

func TestEvaluateHolderRules(t *testing.T) {
	t.Parallel()
	future, past := reapNow.Add(time.Hour), reapNow.Add(-time.Minute)
	cases := []struct {
		name      string
		holder    Holder
		ev        Evidence
		stale     bool
		reason    string
		rationale string
	}{
		{"run advanced to a newer attempt", reapHolderFor(1, "r1", "", future), Evidence{Run: known("in_progress", "", "2")},
			true, "workflow run advanced from attempt 1 to 2", "a rerun replaced the holder's attempt"},
		{"run advanced wins over an active exact job", reapHolderFor(1, "r1", "41", future), Evidence{Run: known("queued", "", "3"), Job: job("41", "in_progress")},
			true, "workflow run advanced from attempt 1 to 3", "table order"},
		{"exact job active", reapHolderFor(1, "r1", "41", past), Evidence{Run: known("in_progress", "", "1"), Job: job("41", "in_progress")},
			false, "holder job 41 is in_progress", "expired lease never frees a slot while the run is active"},
		{"exact job completed", reapHolderFor(1, "r1", "41", future), Evidence{Run: known("in_progress", "", "1"), Job: job("41", "completed")},
			true, "holder job 41 is completed", "matrix leg finished, sibling legs still run"},
		{"exact job unknown keeps the holder", reapHolderFor(1, "r1", "41", past), Evidence{Run: known("in_progress", "", "1")},
			false, "holder run is in_progress", "fail closed to run-level evidence"},
		{"holder without job id is kept while the run is active", reapHolderFor(1, "r1", "", past), Evidence{Run: known("waiting", "", "1"), Job: job("41", "completed")},
			false, "holder run is waiting", "never infer a job: evidence for another job is ignored"},
		{"job evidence for a different job id is ignored", reapHolderFor(1, "r1", "41", future), Evidence{Run: known("in_progress", "", "1"), Job: job("42", "completed")},
			false, "holder run is in_progress", "only the recorded numeric job id counts"},
		{"unrecognized job status is unknown", reapHolderFor(1, "r1", "41", future), Evidence{Run: known("in_progress", "", "1"), Job: job("41", "mystery")},
			false, "holder run is in_progress", "neither active nor completed"},
		{"run completed", reapHolderFor(1, "r1", "41", future), Evidence{Run: known("completed", "failure", "1")},
			true, "holder run is completed (failure)", "terminal run"},
		{"run in an unknown non-active status", reapHolderFor(1, "r1", "", future), Evidence{Run: known("cancelled", "", "1")},
			true, "holder run is cancelled", "known, not active"},
		{"unknown status after lease expiry", reapHolderFor(1, "r1", "", past), Evidence{},
			true, "holder lease expired and run status is unavailable", "the only path where unknown is stale"},
		{"unknown status before lease expiry", reapHolderFor(1, "r1", "", future), Evidence{},
			false, "holder status unavailable before lease expiry", "unknown is never stale on its own"},
		{"unknown status with an unparseable lease", func() Holder { h := reapHolderFor(1, "r1", "", past); h.ExpiresAt = ""; return h }(), Evidence{},
			false, "holder status unavailable before lease expiry", "no lease, no expiry"},
		{"lease judged at observation time", reapHolderFor(1, "r1", "", reapNow.Add(-time.Second)), Evidence{ObservedAt: reapNow.Add(-time.Minute)},
			false, "holder status unavailable before lease expiry", "status was unavailable while the lease still ran"},
		{"non-canonical attempts never count as advanced", func() Holder { h := reapHolderFor(1, "r1", "", future); h.RunAttempt = "01"; return h }(), Evidence{Run: known("in_progress", "", "2")},
			false, "holder run is in_progress", "attempts must be canonical"},
		{"older run attempt than recorded", func() Holder { h := reapHolderFor(1, "r1", "", future); h.RunAttempt = "3"; return h }(), Evidence{Run: known("in_progress", "", "2")},
			false, "run evidence is of attempt 2, before the holder's attempt 3: status unknown", "only an advance proves anything"},
		{"a completed older attempt is no proof against the rerun", func() Holder { h := reapHolderFor(1, "r1", "", future); h.RunAttempt = "2"; return h }(), Evidence{Run: known("completed", "failure", "1")},
			false, "run evidence is of attempt 1, before the holder's attempt 2: status unknown", "the read predates the rerun (seed 106635)"},
		{"older-attempt evidence falls back to the lease", func() Holder { h := reapHolderFor(1, "r1", "", past); h.RunAttempt = "2"; return h }(), Evidence{Run: known("completed", "failure", "1")},
			true, "holder lease expired and run status is unavailable", "treated as unknown, so the lease still bounds it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := EvaluateHolder(tc.holder, tc.ev, reapNow)
			assert.Equal(t, Verdict{Stale: tc.stale, Reason: tc.reason}, v, tc.rationale)
		})
	}
}

func TestQueueEntryFinishedRules(t *testing.T) {
	t.Parallel()
	withJobID := func(id string) Entry { e := entryFor(ident(1, "r1"), 4); e.JobID = id; return e }
	cases := []struct {
		name     string
		entry    Entry
		ev       Evidence
		finished bool
		reason   string
	}{
		{"unknown run keeps the entry (no lease fallback)", withJobID(""), Evidence{}, false, "queued run status unavailable"},
		{"run not active", withJobID(""), Evidence{Run: known("completed", "cancelled", "1")}, true, "queued run is completed (cancelled)"},
		{"run attempt advanced", withJobID(""), Evidence{Run: known("queued", "", "2")}, true, "workflow run advanced from attempt 1 to 2"},
		{"exact job completed", withJobID("7"), Evidence{Run: known("in_progress", "", "1"), Job: job("7", "completed")}, true, "queued job 7 is completed"},
		{"exact job active", withJobID("7"), Evidence{Run: known("in_progress", "", "1"), Job: job("7", "queued")}, false, "queued job 7 is queued"},
		{"no exact job", withJobID(""), Evidence{Run: known("in_progress", "", "1"), Job: job("7", "completed")}, false, "queued run is in_progress"},
		{"a completed older attempt keeps the rerun's entry", func() Entry { e := withJobID(""); e.RunAttempt = "2"; return e }(), Evidence{Run: known("completed", "failure", "1")},
			false, "run evidence is of attempt 1, before the entry's attempt 2: status unknown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, Verdict{Stale: tc.finished, Reason: tc.reason}, QueueEntryFinished(tc.entry, tc.ev))
		})
	}
}

func TestQuarantineOwnerFinishedRules(t *testing.T) {
	t.Parallel()
	q := quarantineOn("q1", "r1")
	cases := []struct {
		name     string
		ev       Evidence
		finished bool
		reason   string
	}{
		{"unknown run keeps the quarantine", Evidence{}, false, "owning run status unavailable"},
		{"terminal run", Evidence{Run: known("completed", "success", "1")}, true, "owning run is completed (success)"},
		{"advanced attempt", Evidence{Run: known("in_progress", "", "2")}, true, "workflow run advanced from attempt 1 to 2"},
		{"active run", Evidence{Run: known("in_progress", "", "1")}, false, "owning run is in_progress"},
		{"job evidence never applies (reservations carry no job id)", Evidence{Run: known("in_progress", "", "1"), Job: job("7", "completed")}, false, "owning run is in_progress"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, Verdict{Stale: tc.finished, Reason: tc.reason}, QuarantineOwnerFinished(q, tc.ev))
		})
	}
	t.Run("a completed older attempt is no proof against the rerun's quarantine", func(t *testing.T) {
		t.Parallel()
		q2 := quarantineOn("q2", "r1")
		q2.RunAttempt = "2"
		assert.Equal(t, Verdict{Reason: "run evidence is of attempt 1, before the reservation's attempt 2: status unknown"},
			QuarantineOwnerFinished(q2, Evidence{Run: known("completed", "failure", "1")}))
	})
}

func TestReapQuarantinesEveryProvenStaleHolderAtSchema4(t *testing.T) {
	t.Parallel()
	s := stateAt(4)
	dead1 := reapHolderFor(1, "r1", "", reapNow.Add(-time.Minute))
	live := reapHolderFor(2, "r2", "", reapNow.Add(-time.Minute))
	dead3 := reapHolderFor(3, "r3", "", reapNow.Add(time.Hour))
	s.Holders = []Holder{dead1, live, dead3}
	s.Queue = []Entry{entryFor(ident(4, "r4"), 4)}
	before := s.Clone()

	out, d, err := Reap(s, cfgLifecycle(3), ReapRequest{Holders: []HolderEvidence{
		{Holder: dead1, Evidence: Evidence{}, ReservationID: "res-1"},
		{Holder: live, Evidence: Evidence{Run: known("in_progress", "", "1")}, ReservationID: "res-2"},
		{Holder: dead3, Evidence: Evidence{Run: known("completed", "success", "1")}, ReservationID: "res-3"},
	}}, reapNow)
	require.NoError(t, err)
	require.Equal(t, before, s, "the input state is never modified")
	assert.True(t, d.Changed)
	require.Len(t, d.Items, 3)
	assert.Equal(t, []ReapOutcome{ReapQuarantined, ReapKept, ReapQuarantined}, []ReapOutcome{d.Items[0].Outcome, d.Items[1].Outcome, d.Items[2].Outcome})
	assert.Len(t, d.Applied(), 2)
	assert.Equal(t, []Holder{live}, out.Holders)
	assert.Equal(t, before.Queue, out.Queue, "holder reaping leaves the queue alone")
	require.Len(t, out.Reservations, 2)
	q := out.Reservations[0]
	assert.Equal(t, Reservation{
		ReservationID: "res-1", HolderID: dead1.HolderID, Repository: dead1.Repository, Workflow: dead1.Workflow, Job: dead1.Job,
		RunID: dead1.RunID, RunAttempt: dead1.RunAttempt, RunURL: dead1.RunURL, RunnerID: "r1",
		Reason: "scheduled stale reaping: holder lease expired and run status is unavailable",
		State:  ReservationQuarantine, CreatedAt: FormatTime(reapNow),
	}, q)
	assert.Equal(t, &q, d.Items[0].Reservation)
	assert.Equal(t, "scheduled stale reaping: holder run is completed (success)", out.Reservations[1].Reason)
	assert.Equal(t, FormatTime(reapNow), out.UpdatedAt)
	assert.Equal(t, 3, len(out.Holders)+len(out.Reservations), "a quarantine keeps consuming the slot")
	mustEncodeDecode(t, out)
}

func TestReapDropsStaleHoldersBeforeSchema4(t *testing.T) {
	t.Parallel()
	for _, schema := range []int{2, 3} {
		t.Run(fmt.Sprintf("schema-%d", schema), func(t *testing.T) {
			t.Parallel()
			s := stateAt(schema)
			h := holderFor(ident(1, "r1"), schema)
			s.Holders = []Holder{h}
			out, d, err := Reap(s, cfgSerial(1), ReapRequest{Holders: []HolderEvidence{{Holder: h, Evidence: Evidence{Run: known("completed", "success", "1")}}}}, reapNow)
			require.NoError(t, err)
			assert.True(t, d.Changed)
			assert.Equal(t, ReapFreed, d.Items[0].Outcome)
			assert.Empty(t, out.Holders)
			assert.Nil(t, out.Reservations)
			mustEncodeDecode(t, out)
		})
	}
}

// TestReapReappliesOnlyTheExactVersion is the sameReapRunVersion contract: a
// re-apply after a CAS conflict must not touch a holder that changed in any
// run-identity field, such as a rerun's fresh holder with the same holderId.
func TestReapReappliesOnlyTheExactVersion(t *testing.T) {
	t.Parallel()
	proven := reapHolderFor(1, "r1", "41", reapNow.Add(-time.Minute))
	mutations := map[string]func(*Holder){
		"repository": func(h *Holder) { h.Repository = "Ambiguous-Interactive/other" },
		"workflow":   func(h *Holder) { h.Workflow = "Nightly" },
		"job":        func(h *Holder) { h.Job = "other" },
		"runId":      func(h *Holder) { h.RunID = "999" },
		"runAttempt": func(h *Holder) { h.RunAttempt = "2" },
		"runUrl":     func(h *Holder) { h.RunURL += "/x" },
		"queuedAt":   func(h *Holder) { h.QueuedAt = FormatTime(t0.Add(time.Second)) },
		"acquiredAt": func(h *Holder) { h.AcquiredAt = FormatTime(t0.Add(time.Second)) },
		"expiresAt":  func(h *Holder) { h.ExpiresAt = FormatTime(t0.Add(time.Second)) },
		"runnerId":   func(h *Holder) { h.RunnerID = "r9" },
		"jobId":      func(h *Holder) { h.JobID = "42" },
		"jobId gone": func(h *Holder) { h.JobID = "" },
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fresh := proven
			mutate(&fresh)
			s := stateAt(4)
			s.Holders = []Holder{fresh}
			out, d, err := Reap(s, cfgLifecycle(1), ReapRequest{Holders: []HolderEvidence{
				{Holder: proven, Evidence: Evidence{Run: known("completed", "success", "1")}, ReservationID: "res-1"},
			}}, reapNow)
			require.NoError(t, err)
			assert.False(t, d.Changed)
			assert.Equal(t, ReapNoLongerMatches, d.Items[0].Outcome)
			assert.Equal(t, s, out)
		})
	}

	t.Run("queue entry refreshed by a rerun", func(t *testing.T) {
		t.Parallel()
		old := entryFor(ident(1, "r1"), 4)
		rerun := old
		rerun.RunAttempt, rerun.QueuedAt = "2", FormatTime(t0.Add(time.Minute))
		s := stateAt(4)
		s.Queue = []Entry{rerun}
		out, d, err := Reap(s, cfgLifecycle(1), ReapRequest{Queue: []QueueEvidence{{Entry: old, Evidence: Evidence{Run: known("queued", "", "2")}}}}, reapNow)
		require.NoError(t, err)
		assert.False(t, d.Changed)
		assert.Equal(t, ReapNoLongerMatches, d.Items[0].Outcome)
		assert.Equal(t, s, out)
	})

	t.Run("quarantine with any changed field", func(t *testing.T) {
		t.Parallel()
		q := quarantineOn("q1", "r1")
		changed := q
		changed.Reason = "something else"
		s := stateAt(5)
		s.Reservations = []Reservation{changed}
		_, d, err := Reap(s, cfgHealth(1), ReapRequest{LeaseGrace: time.Minute,
			Quarantines: []QuarantineEvidence{{Reservation: q, Evidence: Evidence{Run: known("completed", "success", "1")}}}}, reapNow)
		require.NoError(t, err)
		assert.False(t, d.Changed)
		assert.Equal(t, ReapNoLongerMatches, d.Items[0].Outcome)
	})
}

func TestReapAutoRecoversAgedQuarantinesAtSchema5(t *testing.T) {
	t.Parallel()
	grace := 30 * time.Minute // quarantineOn was created at t0-1h, reapNow is t0+2h
	finished := Evidence{Run: known("completed", "failure", "1")}
	base := func(schema int) *State {
		s := stateAt(schema)
		s.Reservations = []Reservation{quarantineOn("q1", "r1"), quarantineOn("q2", "r2")}
		return s
	}
	req := func(ev Evidence) ReapRequest {
		s := base(5)
		return ReapRequest{LeaseGrace: grace, Quarantines: []QuarantineEvidence{{Reservation: s.Reservations[0], Evidence: ev}, {Reservation: s.Reservations[1], Evidence: ev}}}
	}

	t.Run("converts every proven quarantine to a cooldown", func(t *testing.T) {
		t.Parallel()
		out, d, err := Reap(base(5), cfgHealth(2), req(finished), reapNow)
		require.NoError(t, err)
		assert.True(t, d.Changed)
		require.Len(t, out.Reservations, 2)
		for i, r := range out.Reservations {
			assert.Equal(t, ReservationCooldown, r.State)
			assert.Equal(t, "auto-recovered stale quarantine (owning run terminal): cleanup-evidence-unknown", r.Reason)
			assert.Equal(t, FormatTime(reapNow.Add(360*time.Second)), r.AvailableAt)
			assert.Equal(t, quarantineOn("q1", "r1").CreatedAt, r.CreatedAt)
			assert.Equal(t, ReapAutoRecovered, d.Items[i].Outcome)
			assert.Equal(t, &out.Reservations[i], d.Items[i].Reservation)
		}
		mustEncodeDecode(t, out)
	})
	t.Run("cooldown 0 frees the slot without writing an invalid reservation", func(t *testing.T) {
		t.Parallel()
		cfg := cfgHealth(2)
		cfg.ReleaseCooldownSeconds = 0
		out, d, err := Reap(base(5), cfg, req(finished), reapNow)
		require.NoError(t, err)
		assert.True(t, d.Changed)
		assert.Empty(t, out.Reservations)
		assert.Equal(t, ReapFreed, d.Items[0].Outcome)
		mustEncodeDecode(t, out)
	})
	t.Run("skipped while an incident is active", func(t *testing.T) {
		t.Parallel()
		s := base(5)
		inc, err := IncidentFor(ident(50, "r9"), t0, "")
		require.NoError(t, err)
		s.ActiveIncident = inc
		out, d, err := Reap(s, cfgHealth(2), req(finished), reapNow)
		require.NoError(t, err)
		assert.False(t, d.Changed)
		assert.True(t, d.IncidentActive)
		assert.Equal(t, ReapIncidentActive, d.Items[0].Outcome)
		assert.Equal(t, s, out)
	})
	t.Run("an incident never stops holder reaping", func(t *testing.T) {
		t.Parallel()
		s := stateAt(5)
		inc, err := IncidentFor(ident(50, "r9"), t0, "")
		require.NoError(t, err)
		s.ActiveIncident = inc
		h := reapHolderFor(1, "r1", "", reapNow.Add(time.Hour))
		s.Holders = []Holder{h}
		out, d, err := Reap(s, cfgHealth(1), ReapRequest{Holders: []HolderEvidence{{Holder: h, Evidence: finished, ReservationID: "res-1"}}}, reapNow)
		require.NoError(t, err)
		assert.True(t, d.Changed)
		assert.Empty(t, out.Holders)
		assert.Equal(t, inc, out.ActiveIncident)
	})
	t.Run("younger than the grace is kept", func(t *testing.T) {
		t.Parallel()
		r := req(finished)
		r.LeaseGrace = 4 * time.Hour
		out, d, err := Reap(base(5), cfgHealth(2), r, reapNow)
		require.NoError(t, err)
		assert.False(t, d.Changed)
		assert.Equal(t, ReapTooYoung, d.Items[0].Outcome)
		assert.Equal(t, base(5), out)
	})
	t.Run("owning run active or unknown is kept", func(t *testing.T) {
		t.Parallel()
		for _, ev := range []Evidence{{}, {Run: known("in_progress", "", "1")}} {
			_, d, err := Reap(base(5), cfgHealth(2), req(ev), reapNow)
			require.NoError(t, err)
			assert.False(t, d.Changed)
			assert.Equal(t, ReapKept, d.Items[0].Outcome)
		}
	})
	t.Run("gated to schema 5", func(t *testing.T) {
		t.Parallel()
		_, d, err := Reap(base(4), cfgLifecycle(2), req(finished), reapNow)
		require.NoError(t, err)
		assert.False(t, d.Changed)
		assert.Equal(t, ReapNotEligible, d.Items[0].Outcome)
	})
	t.Run("a cooldown is never auto-recovered again", func(t *testing.T) {
		t.Parallel()
		s := stateAt(5)
		c := cooldownOn("c1", "r1", reapNow.Add(time.Hour))
		s.Reservations = []Reservation{c}
		_, d, err := Reap(s, cfgHealth(1), ReapRequest{LeaseGrace: grace, Quarantines: []QuarantineEvidence{{Reservation: c, Evidence: finished}}}, reapNow)
		require.NoError(t, err)
		assert.Equal(t, ReapNoLongerMatches, d.Items[0].Outcome)
	})
}

func TestReapDropsFinishedQueueEntriesWithoutReordering(t *testing.T) {
	t.Parallel()
	s := stateAt(4)
	var entries []Entry
	for i := 1; i <= 5; i++ {
		entries = append(entries, entryFor(ident(i, fmt.Sprintf("r%d", i)), 4))
	}
	s.Queue = append([]Entry{}, entries...)
	done := Evidence{Run: known("completed", "cancelled", "1")}
	running := Evidence{Run: known("in_progress", "", "1")}
	// The scanned FIFO prefix is entries 0-3; entry 4 was not scanned.
	out, d, err := Reap(s, cfgLifecycle(1), ReapRequest{Queue: []QueueEvidence{
		{Entry: entries[0], Evidence: done}, {Entry: entries[1], Evidence: running},
		{Entry: entries[2], Evidence: done}, {Entry: entries[3], Evidence: Evidence{}},
	}}, reapNow)
	require.NoError(t, err)
	assert.True(t, d.Changed)
	assert.Equal(t, []Entry{entries[1], entries[3], entries[4]}, out.Queue)
	assert.Len(t, d.Applied(), 2)
	mustEncodeDecode(t, out)
}

func TestReapSchema2DuplicateQueueEntries(t *testing.T) {
	t.Parallel()
	s := stateAt(2)
	e := entryFor(ident(1, ""), 2)
	other := entryFor(ident(2, ""), 2)
	s.Queue = []Entry{e, other, e}
	out, d, err := Reap(s, DefaultConfig(), ReapRequest{Queue: []QueueEvidence{{Entry: e, Evidence: Evidence{Run: known("completed", "success", "1")}}}}, reapNow)
	require.NoError(t, err)
	assert.True(t, d.Changed)
	assert.Equal(t, []Entry{other}, out.Queue)
}

func TestReapPrunesExpiredCooldowns(t *testing.T) {
	t.Parallel()
	s := stateAt(4)
	s.Reservations = []Reservation{cooldownOn("old", "r1", reapNow), cooldownOn("new", "r2", reapNow.Add(time.Second))}
	out, d, err := Reap(s, cfgLifecycle(2), ReapRequest{}, reapNow)
	require.NoError(t, err)
	assert.True(t, d.Changed)
	assert.Equal(t, 1, d.PrunedCooldowns)
	assert.Equal(t, []Reservation{s.Reservations[1]}, out.Reservations)

	s.Reservations = s.Reservations[1:]
	out, d, err = Reap(s, cfgLifecycle(2), ReapRequest{}, reapNow)
	require.NoError(t, err)
	assert.False(t, d.Changed, "nothing to do is not a write")
	assert.Equal(t, s, out)
}

func TestReapRefusals(t *testing.T) {
	t.Parallel()
	h := reapHolderFor(1, "r1", "", reapNow.Add(time.Hour))
	stale := Evidence{Run: known("completed", "success", "1")}
	s := stateAt(4)
	s.Holders = []Holder{h}

	_, _, err := Reap(nil, cfgLifecycle(1), ReapRequest{}, reapNow)
	requireCode(t, err, CodeInvalidState)
	_, _, err = Reap(s, Config{}, ReapRequest{}, reapNow)
	requireCode(t, err, CodeInvalidConfig)
	_, _, err = Reap(s, cfgLifecycle(1), ReapRequest{Holders: []HolderEvidence{{Holder: h, Evidence: stale}}}, reapNow)
	requireCode(t, err, CodeReservationIDRequired)
	dup := s.Clone()
	dup.Reservations = []Reservation{quarantineOn("res-1", "r5")}
	_, _, err = Reap(dup, cfgLifecycle(2), ReapRequest{Holders: []HolderEvidence{{Holder: h, Evidence: stale, ReservationID: "res-1"}}}, reapNow)
	requireCode(t, err, CodeDuplicateReservation)
	_, _, err = Reap(stateAt(5), cfgHealth(1), ReapRequest{Quarantines: []QuarantineEvidence{{Reservation: quarantineOn("q", "r1")}}}, reapNow)
	requireCode(t, err, CodeInvalidLease)
	bad := s.Clone()
	bad.Holders = append(bad.Holders, h)
	_, _, err = Reap(bad, cfgLifecycle(2), ReapRequest{}, reapNow)
	requireCode(t, err, CodeDuplicateHolder)
}

// TestReapPropertyNeverAddsCapacityOrReorders checks, for random states and
// random evidence, that Reap never increases holders+reservations beyond
// the holders it turned into quarantines, never reorders the surviving
// queue, never removes an item without proof, and always returns a state
// Encode accepts.
func TestReapPropertyNeverAddsCapacityOrReorders(t *testing.T) {
	t.Parallel()
	statuses := []string{"queued", "in_progress", "completed", "waiting", "cancelled", ""}
	rapid.Check(t, func(rt *rapid.T) {
		schema := rapid.IntRange(2, 5).Draw(rt, "schema")
		s := stateAt(schema)
		nh := rapid.IntRange(0, 4).Draw(rt, "holders")
		nq := rapid.IntRange(0, 5).Draw(rt, "queue")
		runner := func(i int) string {
			if schema >= 3 {
				return fmt.Sprintf("r%d", i)
			}
			return ""
		}
		var req ReapRequest
		draw := func(label string) Evidence {
			ev := Evidence{}
			if rapid.Bool().Draw(rt, label+"-known") {
				ev.Run = known(rapid.SampledFrom(statuses).Draw(rt, label+"-status"), "", rapid.SampledFrom([]string{"1", "2"}).Draw(rt, label+"-attempt"))
			}
			if rapid.Bool().Draw(rt, label+"-job") {
				ev.Job = job("7", rapid.SampledFrom(statuses).Draw(rt, label+"-jobstatus"))
			}
			return ev
		}
		for i := range nh {
			h := holderFor(ident(i+1, runner(i)), schema)
			if rapid.Bool().Draw(rt, fmt.Sprintf("h%d-job", i)) {
				h.JobID = "7"
			}
			h.ExpiresAt = FormatTime(reapNow.Add(time.Duration(rapid.IntRange(-60, 60).Draw(rt, fmt.Sprintf("h%d-lease", i))) * time.Minute))
			s.Holders = append(s.Holders, h)
			if rapid.Bool().Draw(rt, fmt.Sprintf("h%d-scanned", i)) {
				req.Holders = append(req.Holders, HolderEvidence{Holder: h, Evidence: draw(fmt.Sprintf("h%d", i)), ReservationID: fmt.Sprintf("res-%d", i)})
			}
		}
		for i := range nq {
			e := entryFor(ident(100+i, runner(100+i)), schema)
			s.Queue = append(s.Queue, e)
			if rapid.Bool().Draw(rt, fmt.Sprintf("q%d-scanned", i)) {
				req.Queue = append(req.Queue, QueueEvidence{Entry: e, Evidence: draw(fmt.Sprintf("q%d", i))})
			}
		}
		cfg := cfgSerial(max(1, nh))
		if schema >= 4 {
			cfg = cfgLifecycle(max(1, nh))
		}
		out, d, err := Reap(s, cfg, req, reapNow)
		if err != nil {
			rt.Fatalf("reap: %v", err)
		}
		if _, err := Encode(out); err != nil {
			rt.Fatalf("encode: %v", err)
		}
		occupiedBefore := len(s.Holders) + len(s.Reservations)
		occupiedAfter := len(out.Holders) + len(out.Reservations)
		if occupiedAfter > occupiedBefore {
			rt.Fatalf("occupancy grew from %d to %d", occupiedBefore, occupiedAfter)
		}
		if schema >= 4 && occupiedAfter != occupiedBefore {
			rt.Fatalf("schema %d must quarantine, not free: %d -> %d", schema, occupiedBefore, occupiedAfter)
		}
		// The surviving queue is a subsequence of the original, in order.
		j := 0
		for _, e := range out.Queue {
			for j < len(s.Queue) && s.Queue[j] != e {
				j++
			}
			if j == len(s.Queue) {
				rt.Fatalf("queue reordered or invented: %+v", out.Queue)
			}
			j++
		}
		for _, it := range d.Applied() {
			if !it.Verdict.Stale {
				rt.Fatalf("applied %s %s without proof", it.Kind, it.ID)
			}
		}
	})
}

// TestReapCarriesCountersOver: every top-level counter of the newest schema
// (such as the schema-6 fencing counter) is carried over unchanged, never
// decreased, by every reap transition. It finds the counters by
// reflection so it holds for fields added after reap.go was written.
func TestReapCarriesCountersOver(t *testing.T) {
	t.Parallel()
	s := stateAt(MaxSchemaVersion)
	v := reflect.ValueOf(s).Elem()
	var counters []string
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), v.Type().Field(i).Name
		if name == "SchemaVersion" || !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
			if f.CanInt() {
				f.SetInt(7)
			} else {
				f.SetUint(7)
			}
			counters = append(counters, name)
		}
	}
	e := entryFor(ident(1, "r1"), MaxSchemaVersion)
	s.Queue = []Entry{e}
	s.Reservations = []Reservation{cooldownOn("c1", "r2", reapNow.Add(-time.Second))}
	out, d, err := Reap(s, cfgLifecycle(1), ReapRequest{Queue: []QueueEvidence{{Entry: e, Evidence: Evidence{Run: known("completed", "success", "1")}}}}, reapNow)
	require.NoError(t, err)
	require.True(t, d.Changed)
	ov := reflect.ValueOf(out).Elem()
	for _, name := range counters {
		assert.Equal(t, v.FieldByName(name).Interface(), ov.FieldByName(name).Interface(), "counter %s", name)
	}
	mustEncodeDecode(t, out)
}
