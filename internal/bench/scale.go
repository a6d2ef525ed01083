// Package bench holds the measurements behind `make bench` that are not the
// demo workload: the named workloads (idle, burst, steady, crash, wait-1h),
// run in virtual time through the real acquire, release and reap actions
// against the in-process emulator (workloads.go, run by TestWorkloads), and
// how the cost of one lock operation grows with the queue (scale.go).
// docs/performance.md explains the method and the numbers.
package bench

import (
	"fmt"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// ScaleRow is the cost of one decode → transition → encode cycle on a state
// with Queue entries waiting.
type ScaleRow struct {
	Queue int `json:"queued_entries"`
	// DocumentBytes is the size of the encoded state file.
	DocumentBytes int `json:"document_bytes"`
	// PollNsPerOp is a waiting poll by the last entry (decode, Acquire with
	// no change, no encode).
	PollNsPerOp int64 `json:"poll_ns_per_op"`
	// AdmitNsPerOp is an admission of the head entry after a seat is freed
	// (decode, Acquire, encode).
	AdmitNsPerOp int64 `json:"admit_ns_per_op"`
	// AdmitAllocsPerOp counts heap allocations of the admission cycle.
	AdmitAllocsPerOp int64 `json:"admit_allocs_per_op"`
	// GrowthVsFirst is AdmitNsPerOp divided by the first row's: 50× more
	// entries costing ~50× more is linear growth.
	GrowthVsFirst float64 `json:"admit_growth_vs_first_row"`
}

var benchNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func identity(i int) lockstate.Identity {
	id := lockstate.Identity{
		Repository: "example-org/game", Workflow: "Unity build", Job: "build", RunID: fmt.Sprint(1_000_000 + i),
		RunAttempt: "1", RunnerID: fmt.Sprintf("runner-%d", i), JobID: fmt.Sprint(5_000_000 + i), QueuedAt: benchNow,
	}
	id.HolderID = fmt.Sprintf("%s:%s:%s:default", id.Repository, id.RunID, id.Job)
	id.RunURL = "https://github.com/" + id.Repository + "/actions/runs/" + id.RunID
	return id
}

// queueState returns an encoded schema-3 state with two holders and n
// queued entries, and the config that goes with it. It builds the document
// directly (admitting thousands of entries one Acquire at a time would be
// quadratic set-up work) and validates it through Decode.
func queueState(n int) ([]byte, lockstate.Config, error) {
	cfg := lockstate.Config{MaxHolders: 2, RunnerSerialization: true, ReleaseCooldownSeconds: 0}
	s := lockstate.Empty("bench")
	s.SchemaVersion = 3
	at := lockstate.FormatTime(benchNow)
	until := lockstate.FormatTime(benchNow.Add(4 * time.Hour))
	for i := 0; i < n+2; i++ {
		id := identity(i)
		e := lockstate.Entry{HolderID: id.HolderID, Repository: id.Repository, Workflow: id.Workflow, Job: id.Job,
			RunID: id.RunID, RunAttempt: id.RunAttempt, RunURL: id.RunURL, QueuedAt: at, RunnerID: id.RunnerID, JobID: id.JobID}
		if i < 2 {
			s.Holders = append(s.Holders, lockstate.Holder{Entry: e, AcquiredAt: at, ExpiresAt: until})
			continue
		}
		s.Queue = append(s.Queue, e)
	}
	s.UpdatedAt = at
	data, err := lockstate.Encode(s)
	if err != nil {
		return nil, cfg, err
	}
	if _, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: "bench"}); err != nil {
		return nil, cfg, err
	}
	return data, cfg, nil
}

// Scale measures the rows for the given queue lengths with testing.Benchmark.
func Scale(sizes []int) ([]ScaleRow, error) {
	var rows []ScaleRow
	for _, n := range sizes {
		data, cfg, err := queueState(n)
		if err != nil {
			return nil, err
		}
		opts := lockstate.DecodeOptions{Lock: "bench"}
		last := identity(n + 1)
		head := identity(2)
		// Free one seat for the admission cycle.
		freed, err := lockstate.Decode(data, opts)
		if err != nil {
			return nil, err
		}
		freed, _, err = lockstate.Cleanup(freed, cfg, lockstate.CleanupRequest{HolderID: identity(0).HolderID, RunAttempt: "1",
			RunnerID: identity(0).RunnerID, Report: lockstate.Report{Status: "confirmed", Health: "healthy", Reason: "cleanup-confirmed"}}, benchNow)
		if err != nil {
			return nil, err
		}
		freedData, err := lockstate.Encode(freed)
		if err != nil {
			return nil, err
		}
		var benchErr error
		poll := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				s, err := lockstate.Decode(data, opts)
				if err == nil {
					_, _, err = lockstate.Acquire(s, cfg, lockstate.AcquireRequest{Identity: last, Lease: 4 * time.Hour}, benchNow)
				}
				if err != nil {
					benchErr = err
				}
			}
		})
		admit := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := lockstate.Decode(freedData, opts)
				if err == nil {
					s, _, err = lockstate.Acquire(s, cfg, lockstate.AcquireRequest{Identity: head, Lease: 4 * time.Hour}, benchNow)
				}
				if err == nil {
					_, err = lockstate.Encode(s)
				}
				if err != nil {
					benchErr = err
				}
			}
		})
		if benchErr != nil {
			return nil, benchErr
		}
		row := ScaleRow{Queue: n, DocumentBytes: len(data), PollNsPerOp: poll.NsPerOp(), AdmitNsPerOp: admit.NsPerOp(), AdmitAllocsPerOp: admit.AllocsPerOp()}
		if len(rows) > 0 && rows[0].AdmitNsPerOp > 0 {
			row.GrowthVsFirst = float64(row.AdmitNsPerOp) / float64(rows[0].AdmitNsPerOp)
		} else {
			row.GrowthVsFirst = 1
		}
		rows = append(rows, row)
	}
	return rows, nil
}
