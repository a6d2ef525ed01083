package history

import (
	"container/heap"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
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
	Quarantine time.Duration `json:"quarantine,omitempty"`
	// Labels and Priority (issue 25) are what the job asked for: its
	// seat-label set (Entry.Labels form, "" for any seat) and its class.
	Labels      string `json:"labels,omitempty"`
	Priority    int    `json:"priority,omitempty"`
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
	// Label (named-seat locks, issue 25) is the label one extra seat
	// carried in this scenario ("" for the observed seat list);
	// SeatsWithLabel is how many seats carried it.
	Label          string `json:"label,omitempty"`
	SeatsWithLabel int    `json:"seats_with_label,omitempty"`
	// ByLabel (named-seat locks) is the replayed waits of the jobs whose
	// label set includes each label ("any": jobs that asked for none),
	// ByClass per priority class, highest first.
	ByLabel []GroupStats `json:"by_label,omitempty"`
	ByClass []GroupStats `json:"by_class,omitempty"`
}

// WhatIf is the capacity-planning answer: the observed demand replayed
// with other seat counts.
//
// A lock whose config names its seats (issue 25) gets no other seat
// counts (a count alone does not say which labels a seat would carry):
// Scenarios holds the observed seat list alone, and LabelScenarios one
// scenario per label the seats carry, with one seat more carrying that
// label (and nothing else).
type WhatIf struct {
	Jobs           int        `json:"jobs"`
	Skipped        int        `json:"skipped"`
	Scenarios      []Scenario `json:"scenarios"`
	LabelScenarios []Scenario `json:"label_scenarios,omitempty"`
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
	if st.Config.Seats.Len() > 0 && st.Schema >= lockstate.FencedSchemaVersion {
		base := ReplaySeats(st.Jobs, st.Config, st.Schema, "")
		base.Observed = true
		w.Scenarios = append(w.Scenarios, base)
		for _, label := range st.Config.SeatLabels() {
			if st.Config.Seats.Len() >= lockstate.MaxHoldersCap {
				break
			}
			w.LabelScenarios = append(w.LabelScenarios, ReplaySeats(st.Jobs, st.Config, st.Schema, label))
		}
		return w
	}
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
	cfg.MaxHolders = seats
	r := newReplay(jobs, cfg, schema)
	r.run()
	return r.scenario()
}

// ReplaySeats replays the jobs on a lock that names its seats (issue 25):
// with cfg's seat list as it is when extraLabel is "", else with one seat
// more, carrying extraLabel alone. Every job asks for its observed label
// set and priority class, so labels, classes, bounded overtaking and seat
// affinity apply as they did. The scenario reports the waits per label
// and per class.
func ReplaySeats(jobs []ReplayJob, cfg lockstate.Config, schema int, extraLabel string) Scenario {
	seats := cfg.Seats.List()
	with := 0
	for _, sc := range seats {
		if slices.Contains(sc.Labels, extraLabel) {
			with++
		}
	}
	if extraLabel != "" {
		seats = append(seats, lockstate.SeatConfig{Name: extraSeatName(seats, extraLabel), Labels: []string{extraLabel}})
		with++
	}
	cfg.Seats, cfg.MaxHolders = lockstate.NewSeatList(seats), len(seats)
	r := newReplay(jobs, cfg, max(schema, lockstate.FencedSchemaVersion))
	r.run()
	sc := r.scenario()
	sc.Label, sc.SeatsWithLabel = extraLabel, with
	sc.ByLabel, sc.ByClass = r.groups(cfg.SeatLabels())
	return sc
}

// extraSeatName names the what-if seat: "whatif-<label>", clipped to a
// valid seat name and made unique among seats.
func extraSeatName(seats []lockstate.SeatConfig, label string) string {
	base := "whatif-" + label
	if len(base) > lockstate.MaxSeatNameLength {
		base = base[:lockstate.MaxSeatNameLength]
	}
	taken := func(n string) bool {
		return slices.ContainsFunc(seats, func(s lockstate.SeatConfig) bool {
			return s.Name == n || lockstate.SeatSecretSuffix(s.Name) == lockstate.SeatSecretSuffix(n)
		})
	}
	name := base
	for i := 2; taken(name); i++ {
		suffix := "-" + strconv.Itoa(i)
		name = base[:min(len(base), lockstate.MaxSeatNameLength-len(suffix))] + suffix
	}
	return name
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
	// named: the config names its seats (every waiter polls).
	named bool
}

func newReplay(jobs []ReplayJob, cfg lockstate.Config, schema int) *replay {
	if schema < lockstate.DefaultSchemaVersion {
		schema = lockstate.DefaultSchemaVersion
	}
	seats := cfg.MaxHolders
	// The lock stays at its schema: the flags that would migrate it are
	// set exactly up to it.
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
	r := &replay{jobs: sorted, cfg: cfg, s: s, byHolder: map[string]int{}, admitted: make([]time.Time, len(jobs)), resOf: map[int]string{}, wakes: map[time.Time]bool{}, seats: seats,
		named: cfg.Seats.Len() > 0}
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
	req := lockstate.AcquireRequest{Identity: r.ids[i], Lease: r.lease(i), Priority: r.jobs[i].Priority}
	if l := r.jobs[i].Labels; l != "" {
		req.Labels = strings.Split(l, ",")
	}
	out, dec, err := lockstate.Acquire(r.s, r.cfg, req, now)
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
			if r.named {
				// Labels and classes decide who a free seat fits: every
				// waiter asks, in queue order.
				if i, ok := r.byHolder[e.HolderID]; ok && r.acquire(i, now) {
					progress = true
					break
				}
				continue
			}
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

// groups returns the replayed waits per label (jobs whose label set
// includes it; "any" for jobs that asked for none) and per class.
func (r *replay) groups(labels []string) (byLabel, byClass []GroupStats) {
	perLabel, perClass := map[string][]time.Duration{}, map[int][]time.Duration{}
	for i, at := range r.admitted {
		if at.IsZero() {
			continue
		}
		wait := at.Sub(r.jobs[i].Arrival)
		perClass[r.jobs[i].Priority] = append(perClass[r.jobs[i].Priority], wait)
		if r.jobs[i].Labels == "" {
			perLabel["any"] = append(perLabel["any"], wait)
			continue
		}
		for _, l := range strings.Split(r.jobs[i].Labels, ",") {
			perLabel[l] = append(perLabel[l], wait)
		}
	}
	for _, l := range append(labels, "any") {
		if ws, ok := perLabel[l]; ok {
			byLabel = append(byLabel, GroupStats{Key: l, Admissions: len(ws), Wait: NewDist(ws)})
		}
	}
	for class := lockstate.MaxPriority; class >= 0; class-- {
		if ws, ok := perClass[class]; ok {
			byClass = append(byClass, GroupStats{Key: strconv.Itoa(class), Admissions: len(ws), Wait: NewDist(ws)})
		}
	}
	return byLabel, byClass
}
