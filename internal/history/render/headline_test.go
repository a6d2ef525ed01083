package render_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/render"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestHeadlineCountsJobsThatGaveUp is the first hour of a new lock as the
// issue saw it: one seat held by a quarantine for most of the window, a
// job that waited 7 minutes and gave up, another still waiting at the end.
// The headline must not say "wait 0s, utilization 0%".
func TestHeadlineCountsJobsThatGaveUp(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	ts := lockstate.FormatTime
	entry := func(run string, queued time.Time) lockstate.Entry {
		return lockstate.Entry{HolderID: "acme/game:" + run + ":unity:default", Repository: "acme/game", Workflow: "Unity", Job: "unity",
			RunID: run, RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/" + run, QueuedAt: ts(queued), RunnerID: "win-0" + run}
	}
	q := lockstate.Reservation{ReservationID: "q-1", HolderID: "acme/game:1:unity:default", Repository: "acme/game", Workflow: "Unity", Job: "unity",
		RunID: "1", RunAttempt: "1", RunURL: "https://github.com/acme/game/actions/runs/1", RunnerID: "win-01", Reason: "cleanup-evidence-unknown",
		State: lockstate.ReservationQuarantine, CreatedAt: ts(t0)}
	state := func(at time.Time, queue ...lockstate.Entry) *lockstate.State {
		s := lockstate.Empty("unity")
		s.SchemaVersion, s.Reservations, s.Queue, s.UpdatedAt = 4, []lockstate.Reservation{q}, append([]lockstate.Entry{}, queue...), ts(at)
		return s
	}
	a, b := entry("2", t0.Add(time.Minute)), entry("3", t0.Add(10*time.Minute))
	s0 := state(t0)
	s1 := state(t0.Add(time.Minute), a)
	s2 := state(t0.Add(8 * time.Minute)) // a gave up after 7 minutes
	s3 := state(t0.Add(10*time.Minute), b)
	step := func(prev, next *lockstate.State, kind history.Kind) history.Step {
		at, _ := lockstate.ParseTime(next.UpdatedAt)
		return history.Step{Commit: history.Commit{Time: at}, Kind: kind, Prev: prev, State: next, Seats: 1, MaxHolders: 1}
	}
	base := step(nil, s0, history.KindRelease)
	steps := []history.Step{step(s0, s1, history.KindAcquire), step(s1, s2, history.KindRelease), step(s2, s3, history.KindAcquire)}
	st := history.Compute("unity", &base, steps, history.Window{Since: t0, Until: t0.Add(13 * time.Minute)})
	require.Equal(t, 1, st.GaveUp)
	assert.Equal(t, 1, st.StillWaiting)
	assert.Equal(t, 2, st.Wait.Count, "the job that gave up and the one still waiting")
	assert.Equal(t, 0, st.AdmittedWait.Count)
	assert.InDelta(t, 7*60, st.GaveUpWait.Max, 0.001)
	assert.Greater(t, st.ReservedShare, 0.99)
	line := render.LockReport{Lock: "unity", Stats: st}.Headline()
	assert.Contains(t, line, "2 waiting jobs, 1 gave up, 1 still waiting")
	assert.Contains(t, line, "by cooldowns or quarantines 100%")
	assert.NotContains(t, line, "wait p50 0s")
}

var xTickRE = regexp.MustCompile(`<text class="x-tick" x="([0-9.]+)"[^>]*>([^<]*)</text>`)

// TestTimeAxisLabelsDoNotOverlap: commits crowded into a few minutes of a
// long window, and a window of minutes, each give x-axis labels that are
// distinct and spaced by more than their own width.
func TestTimeAxisLabelsDoNotOverlap(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	for name, times := range map[string][]time.Duration{
		"crowded then sparse": {0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second, 6 * time.Second, 7 * time.Second, 3 * time.Hour},
		"three minutes":       {0, 20 * time.Second, 40 * time.Second, time.Minute, 2 * time.Minute, 3 * time.Minute},
		"two days":            {0, time.Hour, 20 * time.Hour, 47 * time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			c := render.Chart{Metric: "queue", Title: "queue", XLabel: "time (UTC)", YLabel: "jobs"}
			var vals []float64
			for i, d := range times {
				c.Times = append(c.Times, t0.Add(d))
				vals = append(vals, float64(i))
			}
			c.Series = []render.Series{{Name: "queue", Values: vals}}
			m := xTickRE.FindAllStringSubmatch(render.SVG(c), -1)
			require.GreaterOrEqual(t, len(m), 2)
			seen := map[string]bool{}
			for i, tick := range m {
				assert.False(t, seen[tick[2]], "label %q printed twice", tick[2])
				seen[tick[2]] = true
				if i == 0 {
					continue
				}
				x0, _ := strconv.ParseFloat(m[i-1][1], 64)
				x1, _ := strconv.ParseFloat(tick[1], 64)
				width := 7.5 * float64(max(len(m[i-1][2]), len(tick[2])))
				assert.Greater(t, x1-x0, width, "labels %q and %q overlap", m[i-1][2], tick[2])
			}
		})
	}
}
