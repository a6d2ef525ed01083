package release

import (
	"math"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// PreparationShare is the share of the deadline given to the two
// preparatory calls; the state-branch check gets half of it.
const PreparationShare = 0.25

// Phases are the absolute deadlines of one release (spec §3.8). The zero
// value (deadline 0) means attempt-bounded calls.
type Phases struct {
	// Branch ends the default-branch guard of a custom state-branch (1/8
	// of the budget by default). The reference's branch check is not made
	// (docs/divergences.md A4).
	Branch time.Time
	// Config ends the lock-config read (the rest of the first quarter).
	Config time.Time
	// Cleanup ends the lock-state read and write (the remainder).
	Cleanup time.Time
}

// PhaseDeadlines splits a deadline of seconds starting at start:
// preparation = max(1 ms, min(round(total·0.25), total−1 ms)), branch =
// max(1 ms, round(preparation/2)). Every deadline is absolute, so a phase
// that finishes early hands its remainder forward. seconds <= 0 returns
// the zero Phases.
func PhaseDeadlines(start time.Time, seconds int) Phases {
	if seconds <= 0 {
		return Phases{}
	}
	total := int64(seconds) * 1000
	prep := max(1, min(int64(math.Round(float64(total)*PreparationShare)), total-1))
	branch := max(1, int64(math.Round(float64(prep)/2)))
	ms := func(n int64) time.Time { return start.Add(time.Duration(n) * time.Millisecond) }
	return Phases{Branch: ms(branch), Config: ms(prep), Cleanup: ms(total)}
}

// budget is the retry budget of a phase ending at deadline (zero:
// attempt-bounded). Only a deadline-bearing release waits out a primary
// rate limit's reset ("Server-Directed Retry Waits").
func budget(deadline time.Time) ghclient.Budget {
	if deadline.IsZero() {
		return ghclient.Budget{}
	}
	return ghclient.Budget{Deadline: deadline, WaitPrimaryReset: true}
}
