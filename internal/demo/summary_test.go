package demo

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
)

func TestSummaryNotesExplainWhatLooksUnfair(t *testing.T) {
	t.Parallel()
	clean := &Summary{DiedHolding: []string{}, Admissions: []AdmissionRow{{Order: 1, Job: "job-01", Runner: "runner-1"}}}
	var b bytes.Buffer
	clean.Render(&b)
	assert.NotContains(t, b.String(), "note:", "a run without deaths, reclaims or passes needs no note")

	s := &Summary{
		DiedHolding: []string{"job-02"},
		Admissions: []AdmissionRow{
			{Order: 1, Job: "job-02", Runner: "runner-1"},
			{Order: 2, Job: "job-01", Runner: "runner-1", reclaim: true},
			{Order: 3, Job: "job-05", Runner: "runner-2", Overtook: 1},
		},
		StaleRecovery: []StaleRecovery{{Job: "job-02", Runner: "runner-1", DiedAtMS: 1000, QuarantinedAtMS: 2000, BackInServiceAtMS: 2100, RecoveryMS: 1100, How: "same-runner reclaim"}},
	}
	b.Reset()
	s.Render(&b)
	out := b.String()
	assert.Contains(t, out, "2. job-01  runner-1  at + 0.00s after waiting  0.00s, reclaimed its runner's quarantined seat (took no free seat)\n")
	assert.Contains(t, out, "3. job-05  runner-2  at + 0.00s after waiting  0.00s, passed 1 waiter(s) on busy runners\n")
	assert.Contains(t, out, "note: † after a holder in a seats line marks a job that died holding that seat")
	assert.Contains(t, out, "note: a same-runner quarantine reclaim may be admitted before earlier waiters")
	assert.Contains(t, out, "the FIFO check does not count it")
	assert.Contains(t, out, "note: a waiter whose runner already holds a seat or a quarantine cannot be admitted")
	assert.Less(t, strings.Index(out, "FIFO violations"), strings.Index(out, "note:"), "the notes follow the safety line")
}

// The JSON summary is a stable interface (field names only ever get added):
// the reclaim marker of the human summary is not a key.
func TestSummaryJSONKeysAreStable(t *testing.T) {
	t.Parallel()
	s := &Summary{Admissions: []AdmissionRow{{Order: 1, reclaim: true}}, StaleRecovery: []StaleRecovery{{}}}
	raw, err := json.Marshal(s)
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, []string{
		"admissions", "admitted_jobs", "api", "died_holding", "duration_ms", "failed_jobs", "fifo_violations",
		"handoff_gap_ms", "handoff_gap_polls", "handoff_noticed_ms", "handoff_noticed_polls", "jobs", "lost_entries", "max_concurrent_holders", "max_holders",
		"over_admissions", "poll_ms", "released_jobs", "repositories", "runners", "seat_utilization_while_waiting",
		"seed", "stale_recovery", "state_versions", "violations", "wait_ms",
	}, keys(doc))
	row := doc["admissions"].([]any)[0].(map[string]any)
	assert.Equal(t, []string{"at_ms", "holder_id", "job", "order", "overtook", "runner", "wait_ms"}, keys(row))
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestNoticedGapsRunFromTheFreeingVersionToTheAcquireReturn: the noticed
// gap of a handoff ends when the admitted job's acquire returned, not at the
// admitting version; a job that never returned (or a clock that puts its
// return before the freeing version) counts no gap.
func TestNoticedGapsRunFromTheFreeingVersionToTheAcquireReturn(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	handoffs := []checker.Handoff{
		{HolderID: "a", FreedAt: t0, Admitted: t0.Add(200 * time.Millisecond)},
		{HolderID: "b", FreedAt: t0.Add(time.Second), Admitted: t0.Add(time.Second)},
		{HolderID: "never", FreedAt: t0, Admitted: t0.Add(time.Second)},
		{HolderID: "early", FreedAt: t0.Add(time.Minute), Admitted: t0.Add(time.Minute)},
	}
	returned := map[string]time.Time{
		"a":     t0.Add(450 * time.Millisecond),
		"b":     t0.Add(1300 * time.Millisecond),
		"early": t0,
	}
	got := noticedGaps(handoffs, func(id string) time.Time { return returned[id] })
	assert.Equal(t, []time.Duration{450 * time.Millisecond, 300 * time.Millisecond}, got)
}
