package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// TestSeatsWorkload is the seats workload of make bench (issue 25): 3 named
// seats (pro, pro, plus), 24 jobs on 6 runners, a quarter at priority 5. No
// job fails, the lock stays safe (the checker's seat rules), no waiter is
// overtaken more than maxOvertakes times (PASS/FAIL), and it prints the
// waits per class and per label and the seat affinity hit rate.
func TestSeatsWorkload(t *testing.T) {
	jobs := 24
	if raceEnabled || testing.Short() {
		jobs = 8
	}
	synctest.Test(t, func(t *testing.T) {
		res, err := RunSeats(t, *benchSeed, jobs)
		assert.NoError(t, err)
		if res == nil {
			return
		}
		assert.Zero(t, res.Failed, "no job fails")
		assert.Empty(t, res.Violations)
		assert.Equal(t, res.Jobs, res.Admissions, "every job was admitted")
		assert.True(t, res.OvertakePass(), "max overtaken %d (field %d) > maxOvertakes %d", res.MaxOvertaken, res.MaxOvertakesField, res.MaxOvertakes)
		assert.Equal(t, res.AffinityEligible, res.AffinityHits, "a returning runner whose last seat is free gets it back")
		if os.Getenv("BENCH_JSON") == "1" {
			b, _ := json.MarshalIndent(struct {
				Seats *SeatsResult `json:"seats_labels_priority"`
			}{res}, "", "  ")
			fmt.Println(string(b))
			return
		}
		verdict := "PASS"
		if !res.OvertakePass() {
			verdict = "FAIL"
		}
		fmt.Printf("seats, labels and priority: %d seats (pro, pro, plus), %d jobs on %d runners (2/3 pro, 1/3 plus; 1/4 priority 5): %d admissions, %d failed jobs, makespan %s\n",
			res.Seats, res.Jobs, res.Runners, res.Admissions, res.Failed, res.Makespan.Round(1e9))
		keys := make([]string, 0, len(res.Waits))
		for k := range res.Waits {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			d := res.Waits[k]
			fmt.Printf("  wait %-11s n=%-3d median %ss  p95 %ss  max %ss\n", k, d.N, secs(d.MedianS), secs(d.P95S), secs(d.MaxS))
		}
		rate := func(n, d int) string {
			if d == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
		}
		fmt.Printf("  max times any waiter was overtaken: %d (checker), highest overtakes field %d; target <= maxOvertakes %d: %s\n",
			res.MaxOvertaken, res.MaxOvertakesField, res.MaxOvertakes, verdict)
		fmt.Printf("  seat affinity: %d admissions of a runner that held a seat before, %d of them while a seat's record still named the runner as its last user; that seat was free and carried the labels for %d, and the runner got it back %d times (hit rate %s where affinity could hit, %s of all returning runners)\n",
			res.Returning, res.Recorded, res.AffinityEligible, res.AffinityHits, rate(res.AffinityHits, res.AffinityEligible), rate(res.AffinityHits, res.Returning))
	})
}
