package render_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/render"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestSeatTables: the report shows waits per priority class and per label
// set and each named seat's utilization and affinity hits, escaped.
func TestSeatTables(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	st := &history.Stats{Lock: "unity-seats", From: at, To: at.Add(time.Hour), Releases: map[string]int{},
		Classes:   []history.GroupStats{{Key: "5", Admissions: 1, Wait: history.Dist{Count: 1, P50: 120, P95: 120, Max: 120}}, {Key: "0", Admissions: 3}},
		LabelSets: []history.GroupStats{{Key: "plus", Admissions: 1}, {Key: "pro|<b>", Admissions: 3}},
		SeatUse:   []history.SeatStats{{Seat: "pro-a-1", Admissions: 2, AffinityHits: 1, Utilization: 0.5, ReservedShare: 0.25}}}
	r := &render.Report{Repository: "acme/build-lock", Branch: "lock-state", GeneratedAt: at, Locks: []render.LockReport{{Lock: "unity-seats", Stats: st}}}

	var md bytes.Buffer
	require.NoError(t, render.Markdown(&md, r))
	assert.Contains(t, md.String(), "| Priority class | Admissions | Wait p50 | Wait p95 | Wait max |")
	assert.Contains(t, md.String(), "| `5` | 1 | 2m")
	assert.Contains(t, md.String(), "| Seat labels |")
	assert.Contains(t, md.String(), "| `pro-a-1` | 2 | 1 | 50% | 25% |")

	var page bytes.Buffer
	require.NoError(t, render.HTML(&page, r))
	assert.Contains(t, page.String(), "<h3>By seat</h3>")
	assert.Contains(t, page.String(), "<code>pro|&lt;b&gt;</code>")
	assert.NotContains(t, page.String(), "pro|<b>")

	var om bytes.Buffer
	require.NoError(t, render.OpenMetrics(&om, r))
	assert.Contains(t, om.String(), `buildlock_history_class_wait_seconds{lock="unity-seats",class="5",quantile="0.5"} 120`)
	assert.Contains(t, om.String(), `buildlock_history_labels_wait_seconds_count{lock="unity-seats",labels="plus"} 0`)
	assert.Contains(t, om.String(), `buildlock_history_named_seat_utilization_ratio{lock="unity-seats",seat="pro-a-1"} 0.5`)
	assert.Contains(t, om.String(), `buildlock_history_named_seat_affinity_hits{lock="unity-seats",seat="pro-a-1"} 1`)

	var none bytes.Buffer
	st.Classes, st.LabelSets, st.SeatUse = nil, nil, nil
	require.NoError(t, render.Markdown(&none, r))
	assert.NotContains(t, none.String(), "Priority class")
}

// TestLabelWhatIfTables: a named-seat lock's report shows, per label, the
// waits of its jobs now and with one seat more carrying it, in every
// format.
func TestLabelWhatIfTables(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cfg := lockstate.Config{MaxHolders: 2, RunnerSerialization: true, ResourceLifecycle: true, AccountHealth: true, FencedAdmission: true, MaxOvertakes: 2,
		Seats: lockstate.NewSeatList([]lockstate.SeatConfig{{Name: "pro-1", Labels: []string{"pro"}}, {Name: "plus-1", Labels: []string{"plus"}}})}
	var jobs []history.ReplayJob
	for i, r := range []string{"a", "b", "c"} {
		jobs = append(jobs, history.ReplayJob{Arrival: at.Add(time.Duration(i) * time.Second), Hold: 10 * time.Minute, Runner: r, Labels: "pro", Release: history.ReleaseConfirmed})
	}
	st := &history.Stats{Lock: "unity-seats", From: at, To: at.Add(time.Hour), Releases: map[string]int{}, Jobs: jobs, Seats: 2,
		Schema: lockstate.FencedSchemaVersion, Config: cfg}
	wi := history.RunWhatIf(st)
	rows := render.LabelWhatIf(wi)
	require.Len(t, rows, 2)
	assert.Equal(t, "plus", rows[0].Label)
	assert.Equal(t, "pro", rows[1].Label)
	assert.Equal(t, 1, rows[1].Seats)
	assert.InDelta(t, 1198, rows[1].Now.Max, 0.001, "the third pro job waits two holds less its 2 s")
	assert.InDelta(t, 598, rows[1].Then.Max, 0.001, "one hold with a second pro seat")
	r := &render.Report{Repository: "acme/build-lock", Branch: "lock-state", GeneratedAt: at, Locks: []render.LockReport{{Lock: "unity-seats", Stats: st, WhatIf: wi}}}

	var md bytes.Buffer
	require.NoError(t, render.Markdown(&md, r))
	assert.Contains(t, md.String(), "| Label | Seats with it |")
	assert.Contains(t, md.String(), "| `pro` | 1 → 2 |")
	var page bytes.Buffer
	require.NoError(t, render.HTML(&page, r))
	assert.Contains(t, page.String(), "<h3>What if one seat more carried each label</h3>")
	assert.Contains(t, page.String(), "<td><code>pro</code></td><td>1 → 2</td>")
	var om bytes.Buffer
	require.NoError(t, render.OpenMetrics(&om, r))
	assert.Contains(t, om.String(), `buildlock_history_whatif_label_wait_seconds{lock="unity-seats",label="pro",quantile="0.99"} 598`)
	var js bytes.Buffer
	require.NoError(t, render.JSON(&js, r))
	assert.Contains(t, js.String(), `"label_scenarios"`)
}
