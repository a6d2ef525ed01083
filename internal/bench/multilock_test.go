package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
)

// TestMultiLockBurst is the four-locks burst of make bench: 4 locks of 2
// seats on one lock-state branch, 16 jobs per lock arriving within one
// minute, with replica lag and branch-head conflicts on. No job fails, every
// lock stays safe, and the conflicts per admission are reported.
func TestMultiLockBurst(t *testing.T) {
	jobsPerLock := 16
	if raceEnabled || testing.Short() {
		jobsPerLock = 4
	}
	synctest.Test(t, func(t *testing.T) {
		res, err := RunMultiLock(t, *benchSeed, jobsPerLock, 2)
		assert.NoError(t, err)
		if res == nil {
			return
		}
		assert.Zero(t, res.Failed, "no job fails")
		assert.Empty(t, res.Violations)
		assert.Equal(t, res.Jobs, res.Admissions, "every job was admitted")
		if os.Getenv("BENCH_JSON") == "1" {
			b, _ := json.MarshalIndent(struct {
				MultiLock *MultiLockResult `json:"four_locks_burst"`
			}{res}, "", "  ")
			fmt.Println(string(b))
			return
		}
		fmt.Printf("four-locks burst: %d locks x %d jobs (%d seats each) on one lock-state branch: %d admissions, %d failed jobs, makespan %s\n"+
			"  content write attempts %d (%.2f per admission), conflicts %d (%.2f per admission), of which branch-head %d (%.2f per admission); lagged state reads %d; secondary-limit answers %d\n",
			res.Locks, res.JobsPerLock, res.Seats, res.Admissions, res.Failed, res.Makespan.Round(1e9),
			res.WriteAttempts, res.WriteAttemptsPerAdmission, res.Conflicts, res.ConflictsPerAdmission, res.BranchHeadConflicts, res.BranchHeadConflictsPerAdmission,
			res.LaggedReads, res.SecondaryLimited)
	})
}
