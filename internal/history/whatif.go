package history

import (
	"container/heap"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Release kinds of a replayed job.
const (
	// ReleaseConfirmed: a clean release (a cooldown of the config's
	// releaseCooldownSeconds, or the seat freed at once with 0).
	ReleaseConfirmed = "confirmed"
	// ReleaseQuarantined: the seat became a quarantine (an unproven release
	// or a reaped holder) that lasted ReplayJob.Quarantine.
	ReleaseQuarantined = "quarantined"
)

// ReplayJob is one observed admission: when the job asked for a seat, how
// long it held it, on which runner, and how its seat was released.
type ReplayJob struct {
	Arrival    time.Time     `json:"arrival"`
	Wait       time.Duration `json:"wait"`
	Hold       time.Duration `json:"hold"`
	Released   bool          `json:"released"`
	Runner     string        `json:"runner"`
	Repository string        `json:"repository"`
	Release    string        `json:"release"`
	// Quarantine is how long the quarantine lasted until a recovery or
	// reclaim (0: never recovered in the window).
	Quarantine  time.Duration `json:"quarantine,omitempty"`
	reservation string
}

// Scenario is what one seat count would have given the observed demand.
type Scenario struct {
	Seats int `json:"seats"`
	// Observed marks the seat count the lock actually had.
	Observed bool `json:"observed"`
	Wait     Dist `json:"wait"`
	// Utilization is holder seat-time over seat capacity-time from the
	// first arrival to the last release.
	Utilization float64 `json:"utilization"`
	MaxQueue    int     `json:"max_queue"`
	Admitted    int     `json:"admitted"`
	// Unfinished counts jobs the replay never admitted (a seat count too
	// small for a quarantine that was never recovered).
	Unfinished int `json:"unfinished"`
}

// WhatIf is the capacity-planning answer: the observed demand replayed
// with other seat counts.
type WhatIf struct {
	Jobs      int        `json:"jobs"`
	Skipped   int        `json:"skipped"`
	Scenarios []Scenario `json:"scenarios"`
}

// WhatIfSeats returns N−1 (when at least 1), N, N+1 and N+2, at most 64.
func WhatIfSeats(n int) []int {
	var out []int
	for _, s := range []int{n - 1, n, n + 1, n + 2} {
		if s >= 1 && s <= lockstate.MaxHoldersCap {
			out = append(out, s)
		}
	}
	return out
}

// RunWhatIf replays the window's admitted jobs at each seat count of
// WhatIfSeats(st.Seats).
func RunWhatIf(st *Stats) *WhatIf {
	w := &WhatIf{Jobs: len(st.Jobs), Skipped: st.GaveUp}
	for _, seats := range WhatIfSeats(max(st.Seats, 1)) {
		sc := Replay(st.Jobs, st.Config, st.Schema, seats)
		sc.Observed = seats == st.Seats
		w.Scenarios = append(w.Scenarios, sc)
	}
	return w
}

// Replay runs the observed jobs through the pure core with `seats` seats:
// a discrete-event simulation in virtual time in which every job asks at
// its observed arrival and holds its seat for its observed hold, every
// admission, release, reclaim and cooldown is lockstate's own transition
// (runner serialization, bounded overtaking and reservations included),
// and a waiter is admitted the moment the core would admit it (instant
// handoff: the replay has no polling delay, so compare scenarios with each
// other, the observed seat count included, rather than with the observed
// waits).
func Replay(jobs []ReplayJob, cfg lockstate.Config, schema int, seats int) Scenario {
	r := newReplay(jobs, cfg, schema, seats)
	r.run()
	return r.scenario()
}

type replayEvent struct {
	at   time.Time
	seq  int
	kind int // 0 arrive, 1 release, 2 recover, 3 wake
	job  int
}

type eventHeap []replayEvent

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(replayEvent)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type replay struct {
	jobs     []ReplayJob
	cfg      lockstate.Config
	s        *lockstate.State
	events   eventHeap
	seq      int
	ids      []lockstate.Identity
	byHolder map[string]int
	admitted []time.Time
	resOf    map[int]string
	nextRes  int
	wakes    map[time.Time]bool
	// utilization
	busy     float64
	last     time.Time
	first    time.Time
	end      time.Time
	seats    int
	maxQueue int
}

func newReplay(jobs []ReplayJob, cfg lockstate.Config, schema, seats int) *replay {
	if schema < lockstate.DefaultSchemaVersion {
		schema = lockstate.DefaultSchemaVersion
	}
	// The lock stays at its schema: the flags that would migrate it are
	// set exactly up to it.
	cfg.MaxHolders = seats
	cfg.RunnerSerialization = schema >= 3
	cfg.ResourceLifecycle = schema >= 4
	cfg.AccountHealth = schema >= 5
	cfg.FencedAdmission = schema >= lockstate.FencedSchemaVersion
	s := lockstate.Empty("whatif")
	s.SchemaVersion = schema
	if schema >= 4 {
		s.Reservations = []lockstate.Reservation{}
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobs[order[a]].Arrival.Before(jobs[order[b]].Arrival) })
	sorted := make([]ReplayJob, len(jobs))
	for i, j := range order {
		sorted[i] = jobs[j]
	}
	r := &replay{jobs: sorted, cfg: cfg, s: s, byHolder: map[string]int{}, admitted: make([]time.Time, len(jobs)), resOf: map[int]string{}, wakes: map[time.Time]bool{}, seats: seats}
	for i, j := range sorted {
		runner := j.Runner
		if runner == "" {
			runner = "runner-" + strconv.Itoa(i)
		}
		id := lockstate.Identity{
			HolderID: fmt.Sprintf("whatif/job:%d:replay:%d", i+1, i), Repository: "whatif/job", Workflow: "replay", Job: "replay",
			RunID: strconv.Itoa(i + 1), RunAttempt: "1", RunURL: "https://github.com/whatif/job/actions/runs/" + strconv.Itoa(i+1),
			RunnerID: runner, QueuedAt: j.Arrival,
		}
		r.ids = append(r.ids, id)
		r.byHolder[id.HolderID] = i
		r.push(j.Arrival, 0, i)
	}
	return r
}

func (r *replay) push(at time.Time, kind, job int) {
	r.seq++
	heap.Push(&r.events, replayEvent{at: at, seq: r.seq, kind: kind, job: job})
}

func (r *replay) lease(i int) time.Duration { return r.jobs[i].Hold + 24*time.Hour }

func (r *replay) account(now time.Time) {
	if !r.last.IsZero() && now.After(r.last) {
		r.busy += float64(len(r.s.Holders)) * now.Sub(r.last).Seconds()
	}
	r.last = now
}

func (r *replay) run() {
	for steps := 0; r.events.Len() > 0 && steps < 10*len(r.jobs)+100; steps++ {
		ev := heap.Pop(&r.events).(replayEvent)
		r.account(ev.at)
		if r.first.IsZero() {
			r.first = ev.at
		}
		switch ev.kind {
		case 0:
			r.acquire(ev.job, ev.at)
		case 1:
			r.release(ev.job, ev.at)
		case 2:
			if id, ok := r.resOf[ev.job]; ok {
				if out, _, err := lockstate.RecoverQuarantine(r.s, r.cfg, id, ev.at); err == nil {
					r.s = out
				}
			}
		}
		r.pollAll(ev.at)
		if next, ok := lockstate.NextCooldownExpiry(r.s, ev.at); ok && !r.wakes[next] {
			r.wakes[next] = true
			r.push(next, 3, -1)
		}
		r.maxQueue = max(r.maxQueue, len(r.s.Queue))
		if len(r.s.Holders) > 0 || len(r.s.Queue) > 0 {
			r.end = ev.at
		}
	}
}

// acquire is one poll by job i; an admission schedules its release.
func (r *replay) acquire(i int, now time.Time) bool {
	out, dec, err := lockstate.Acquire(r.s, r.cfg, lockstate.AcquireRequest{Identity: r.ids[i], Lease: r.lease(i)}, now)
	if err != nil {
		return false
	}
	r.s = out
	if dec.Outcome == lockstate.OutcomeAdmitted {
		r.admitted[i] = now
		r.push(now.Add(r.jobs[i].Hold), 1, i)
		return true
	}
	return false
}

// pollAll lets every waiter poll, in queue order, until nobody more is
// admitted (instant handoff).
func (r *replay) pollAll(now time.Time) {
	for {
		progress := false
		pruned, _ := lockstate.PruneExpiredCooldowns(r.s, now)
		free := lockstate.FreeSlots(pruned, r.cfg)
		for _, e := range r.s.Queue {
			// Only a waiter the core ranks admissible can be admitted (a
			// reclaim ranks 0 without a free seat).
			if rank := lockstate.AdmissibleRank(pruned, r.cfg, e.HolderID); rank < 0 || (rank > 0 && rank >= free) {
				continue
			}
			if i, ok := r.byHolder[e.HolderID]; ok && r.acquire(i, now) {
				progress = true
				break
			}
		}
		if !progress {
			return
		}
	}
}

func (r *replay) release(i int, now time.Time) {
	j := r.jobs[i]
	report := lockstate.Report{Status: lockstate.StatusConfirmed, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupConfirmed}
	if j.Release == ReleaseQuarantined {
		report = lockstate.Report{Status: lockstate.StatusUnknown, Health: lockstate.HealthHealthy, Reason: lockstate.ReasonCleanupEvidenceUnknown}
	}
	r.nextRes++
	resID := "whatif-" + strconv.Itoa(r.nextRes)
	id := r.ids[i]
	out, dec, err := lockstate.Cleanup(r.s, r.cfg, lockstate.CleanupRequest{HolderID: id.HolderID, RunAttempt: id.RunAttempt, RunnerID: id.RunnerID, Report: report, ReservationID: resID}, now)
	if err != nil {
		return
	}
	r.s = out
	if dec.Reservation != nil && dec.Reservation.State == lockstate.ReservationQuarantine {
		r.resOf[i] = dec.Reservation.ReservationID
		if j.Quarantine > 0 {
			r.push(now.Add(j.Quarantine), 2, i)
		}
	}
}

func (r *replay) scenario() Scenario {
	sc := Scenario{Seats: r.seats, MaxQueue: r.maxQueue}
	var waits []time.Duration
	for i, at := range r.admitted {
		if at.IsZero() {
			sc.Unfinished++
			continue
		}
		sc.Admitted++
		waits = append(waits, at.Sub(r.jobs[i].Arrival))
	}
	sc.Wait = NewDist(waits)
	if span := r.end.Sub(r.first).Seconds(); span > 0 {
		sc.Utilization = r.busy / (float64(r.seats) * span)
	}
	return sc
}
