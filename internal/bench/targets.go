package bench

// The issue targets a workload's Result is judged against.

import "fmt"

// Target is one issue target evaluated on one workload.
type Target struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Bar   string  `json:"bar"`
	Value float64 `json:"value"`
	Pass  bool    `json:"pass"`
}

// Target IDs, in table order.
const (
	TargetHandoffMedian   = "handoff-median"
	TargetHandoffP95      = "handoff-p95"
	TargetWaitWrites      = "waiting-writes"
	TargetWaitCharged     = "waiting-charged-per-hour"
	TargetIdleRequests    = "idle-admission-installation-requests"
	TargetWritesPerAdmit  = "writes-per-admitted-job"
	TargetQueuedPeak      = "queued-peak-requests-per-minute"
	TargetQueuedPeakInst  = "queued-peak-installation-charged-per-minute"
	TargetQueuedPeakCharg = "queued-peak-charged-per-minute"
	TargetBurstSecondary  = "burst-secondary-limit-responses"
	TargetBurstWrites     = "burst-peak-content-writes-per-minute"
	TargetBurstPoints     = "burst-peak-points-per-endpoint-per-minute"
	TargetBurstConflicts  = "burst-cas-conflicts-per-admission"
	TargetBurstCharged    = "burst-installation-charged-per-job"
	TargetBurstDisplaced  = "burst-max-arrival-displacement"
	TargetStateRate       = "state-endpoint-requests-per-minute"
	TargetSteadyWrites    = "steady-writes-per-admitted-job"
)

// minHandoffs is the fewest handoff gaps a workload needs to be judged on
// the handoff targets.
const minHandoffs = 10

func targets(wl Workload, r *Result) []Target {
	var ts []Target
	le := func(id, name, bar string, v, limit float64) {
		ts = append(ts, Target{ID: id, Name: name, Bar: bar, Value: v, Pass: v <= limit})
	}
	// A median of fewer than minHandoffs gaps says nothing; such a
	// workload still reports its gaps, but is not judged on them.
	// In a mixed fleet the reference client's waiters notice a handoff at
	// their own 15-20 s poll, which no change here moves: the handoff
	// targets judge our waiters (the pooled figures stay in the table).
	gap := r.HandoffGap
	if wl.Mixed && r.HandoffOurs != nil {
		gap = *r.HandoffOurs
	}
	if gap.N >= minHandoffs && len(wl.ConfigSteps) == 0 && !wl.BudgetBound {
		le(TargetHandoffMedian, "handoff noticed median (s; our waiters in a mixed fleet)", "≤ 2 s", gap.MedianS, 2)
		le(TargetHandoffP95, "handoff noticed p95 (s; our waiters in a mixed fleet)", "≤ 4 s", gap.P95S, 4)
	}
	if r.Waiter != nil {
		le(TargetWaitWrites, "waiting job: content writes in its first hour", "0", float64(r.Waiter.Counts.WriteAttempts), 0)
		le(TargetWaitCharged, "waiting job: charged requests in its first hour", "≤ 40/h", float64(r.Waiter.Counts.Charged), 40)
	}
	if r.IdleAdmit != nil {
		le(TargetIdleRequests, "idle admission: installation-token requests (plus App auth)", "≤ 3", r.IdleAdmit.Installation, 3)
	}
	if r.Admitted > 0 {
		limit := 3.0
		if wl.Idle {
			limit = 2
		}
		le(TargetWritesPerAdmit, "content writes per admitted job", "≤ 3 (≤ 2 idle)", r.WritesPerAdmission, limit)
	}
	if wl.Burst && !wl.Informative {
		le(TargetBurstSecondary, "burst: secondary-limit responses received", "0", float64(r.Total.Secondary), 0)
		le(TargetBurstWrites, "burst: peak content-creating requests/min", "≤ 70/min", float64(r.PeakWrites), 70)
		le(TargetBurstPoints, "burst: peak points per endpoint/min (one identity)", "≤ 800/min", float64(r.PeakPoints), 800)
		le(TargetBurstConflicts, "burst: CAS conflicts per admission", "≤ 1.0", r.ConflictsPerAdmission, 1)
		le(TargetBurstCharged, "burst: charged requests per job (writer installation)", "≤ 20", r.InstallChargedPerJob, 20)
		le(TargetBurstDisplaced, "burst: max arrival-order displacement", fmt.Sprintf("≤ %d (seats)", r.Seats), float64(r.MaxDisplacement), float64(r.Seats))
	}
	if wl.StateRate > 0 {
		le(TargetStateRate, fmt.Sprintf("%d seats: peak state-endpoint requests/min (304s included)", r.Seats), fmt.Sprintf("≤ %d/min", wl.StateRate), float64(r.PeakStateReads), float64(wl.StateRate))
	}
	if wl.Queued > 0 && r.Admitted > 0 {
		le(TargetSteadyWrites, fmt.Sprintf("%d queued: content writes per admitted job", wl.Queued), "≤ 2.0", r.WritesPerAdmission, 2)
	}
	if len(wl.ConfigSteps) > 0 {
		upgradeTargets(r, le)
	}
	latencyTargets(wl, r, le)
	if wl.Queued > 0 {
		le(TargetQueuedPeak, fmt.Sprintf("%d queued: peak requests/min (org-wide)", wl.Queued), "≤ 300/min", float64(r.PeakPerMin), 300)
		le(TargetQueuedPeakInst, fmt.Sprintf("%d queued: peak charged/min, writer installation", wl.Queued), "≤ 60/min", float64(r.PeakInstallCharged), 60)
		le(TargetQueuedPeakCharg, fmt.Sprintf("%d queued: peak charged/min, all credentials", wl.Queued), "≤ 60/min", float64(r.PeakCharged), 60)
	}
	return ts
}
