package reap_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// BenchmarkReapRequests prints what one reap run sends for hostile and
// merely large documents (requests/run; the CPU time is incidental): the
// numbers behind docs/runbook.md "Request budget". Before the budget, the
// bounds and the memoized evidence (commit e27ce35) the four cases cost
// 5,007, 1,805, 1,805 and 15 requests; now 4, 105, 270 and 15.
func BenchmarkReapRequests(b *testing.B) {
	now := time.Now()
	cases := []struct {
		name  string
		queue func(w *reaptest.World) []lockstate.Entry
	}{
		{"hostile-15500-entries-50-missing-repos", func(*reaptest.World) []lockstate.Entry { return hostileQueue(15500, 50, 1_000_000, now) }},
		{"hostile-900-entries-50-missing-repos", func(*reaptest.World) []lockstate.Entry { return hostileQueue(900, 50, 2_000_000, now) }},
		{"hostile-900-entries-900-missing-repos", func(*reaptest.World) []lockstate.Entry { return hostileQueue(900, 900, 3_000_000, now) }},
		{"1000-entries-of-10-live-runs", func(w *reaptest.World) []lockstate.Entry {
			var out []lockstate.Entry
			var live []int64
			for range 10 {
				live = append(live, run(w, game, "in_progress", ""))
			}
			for i := range 1000 {
				e := entry(game, live[i%10], "runner", 0, now)
				e.HolderID = fmt.Sprintf("%s/%s:%d:build:leg-%d", owner, game, live[i%10], i)
				out = append(out, e)
			}
			return out
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			w := reaptest.New(b, cfgLifecycle)
			s := state(4)
			s.Queue = tc.queue(w)
			w.SeedState(s)
			var total int64
			for b.Loop() {
				w.Em.ResetMetrics()
				_ = reap.Run(context.Background(), deps(w, nil))
				total += w.Em.Metrics().Requests
			}
			b.ReportMetric(float64(total)/float64(b.N), "requests/run")
		})
	}
}
