package bench

// The seats workload of `make bench` (issue 25): named seats with two
// labels and two priority classes, through the real acquire and release
// actions. It reports the waits per class, the most times any waiter was
// overtaken (target: at most maxOvertakes) and the seat affinity hit rate.

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// seatsMaxOvertakes is the seats workload's overtaking bound.
const seatsMaxOvertakes = 2

// seatsConfig is the seats workload's lock: three named seats (two pro, one
// plus), priority classes up to 9, schema 6.
var seatsConfig = fmt.Sprintf(`{"maxHolders":3,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,`+
	`"releaseCooldownSeconds":0,"maxOvertakes":%d,"seats":[{"name":"pro-1","labels":["pro"]},{"name":"pro-2","labels":["pro"]},{"name":"plus-1","labels":["plus"]}],`+
	`"priority":{"max":9,"maxForPullRequests":0}}`, seatsMaxOvertakes)

// SeatsResult is what the seats workload measured.
type SeatsResult struct {
	Seats        int `json:"seats"`
	Jobs         int `json:"jobs"`
	Runners      int `json:"runners"`
	Admissions   int `json:"admissions"`
	Failed       int `json:"failed"`
	MaxOvertakes int `json:"max_overtakes"`
	// Waits are the waits (arrival to admission) per class ("priority 0",
	// "priority 5") and per label ("pro", "plus").
	Waits map[string]Dist `json:"waits"`
	// MaxOvertaken is the most admissions that passed one waiter (the
	// checker's count); MaxOvertakesField the highest overtakes field any
	// queue entry carried. Both must stay <= MaxOvertakes.
	MaxOvertaken      int `json:"max_overtaken"`
	MaxOvertakesField int `json:"max_overtakes_field"`
	// Returning counts admissions of a runner that held a seat earlier;
	// Recorded those of a runner some seat's affinity record still names
	// (its last holder ran there); AffinityHits those that got that same
	// seat back; AffinityEligible those whose recorded seat was free and
	// carried their labels when they were admitted (where affinity could
	// hit).
	Returning        int `json:"returning_admissions"`
	Recorded         int `json:"recorded_admissions"`
	AffinityEligible int `json:"affinity_eligible"`
	AffinityHits     int `json:"affinity_hits"`
	// Makespan is the virtual time from the first arrival to the last
	// release.
	Makespan   time.Duration `json:"makespan_ns"`
	Violations []string      `json:"violations,omitempty"`
	Errors     []string      `json:"errors,omitempty"`
}

// OvertakePass reports whether no waiter was overtaken past the bound.
func (r *SeatsResult) OvertakePass() bool {
	return r.MaxOvertaken <= r.MaxOvertakes && r.MaxOvertakesField <= r.MaxOvertakes
}

// RunSeats runs the seats workload: 3 seats (pro, pro, plus), jobs jobs
// (two thirds ask for pro, one third for plus; a quarter at priority 5)
// arriving within two minutes on 6 runners, 4-6 minute holds. It must run
// inside a synctest bubble.
func RunSeats(t testing.TB, seed uint64, jobs int) (*SeatsResult, error) {
	w, err := newWorld(t, seed, seatsConfig, DefaultLatency)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), safetyLimit)
	defer cancel()
	rng := mrand.New(mrand.NewPCG(seed, 25))
	const runners = 6
	var wg sync.WaitGroup
	for i := range jobs {
		j := &simJob{arrival: time.Duration(rng.Int64N(int64(2 * time.Minute))), hold: jitter(rng, 4*time.Minute, 2*time.Minute),
			runner: fmt.Sprintf("runner-%d", i%runners), labels: "pro"}
		if i%3 == 2 {
			j.labels = "plus"
		}
		if i%4 == 3 {
			j.priority = 5
		}
		w.addJob(j)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.runJob(ctx, j, nil)
		}()
	}
	wg.Wait()
	end := time.Now()
	cfg, _ := lockstate.DecodeConfig([]byte(seatsConfig))
	res := &SeatsResult{Seats: cfg.Seats.Len(), Jobs: jobs, Runners: runners, MaxOvertakes: seatsMaxOvertakes, Makespan: end.Sub(w.start), Waits: map[string]Dist{}}
	waits := map[string][]time.Duration{}
	w.mu.Lock()
	for _, j := range w.jobs {
		if j.err != nil {
			res.Failed++
			if len(res.Errors) < 5 {
				res.Errors = append(res.Errors, j.err.Error())
			}
		}
		if j.admitted.IsZero() {
			continue
		}
		res.Admissions++
		d := j.admitted.Sub(j.arrived)
		class := fmt.Sprintf("priority %d", j.priority)
		waits[class] = append(waits[class], d)
		waits[j.labels] = append(waits[j.labels], d)
	}
	removals := append([]checker.Removal(nil), w.removals...)
	w.mu.Unlock()
	for k, ds := range waits {
		res.Waits[k] = dist(ds)
	}
	versions := w.versions()
	rep := checker.Check(versions, checker.Input{Lock: simLock, ServerURL: simServerURL, MaxHolders: res.Seats, Removals: removals,
		MaxOvertakes: seatsMaxOvertakes, CheckOvertakes: true, Seats: cfg.Seats.List()})
	res.Violations = append(res.Violations, rep.Violations...)
	res.MaxOvertaken = rep.MaxOvertaken
	seatAffinity(res, versions, cfg)
	sort.Strings(res.Violations)
	if res.Failed > 0 || len(res.Violations) > 0 || !res.OvertakePass() {
		return res, fmt.Errorf("seats workload: %d failed jobs, %d violations, max overtaken %d/%d (bound %d): %v %v",
			res.Failed, len(res.Violations), res.MaxOvertaken, res.MaxOvertakesField, res.MaxOvertakes, res.Errors, res.Violations)
	}
	return res, nil
}

// seatAffinity reads every admission of the history: the overtakes fields,
// and whether a returning runner got its last seat back (and could have:
// the seat was free and carried its labels).
func seatAffinity(res *SeatsResult, versions []checker.Version, cfg lockstate.Config) {
	var prev *lockstate.State
	held := map[string]bool{}
	for _, v := range decodedStates(versions) {
		st := v.State
		for _, q := range st.Queue {
			res.MaxOvertakesField = max(res.MaxOvertakesField, q.Overtakes)
		}
		if prev != nil {
			for _, h := range st.Holders {
				if h.Seat == "" || lockstate.HolderIndex(prev, h.HolderID) >= 0 {
					continue
				}
				runner := lockstate.RunnerKey(h.Entry)
				if held[runner] {
					res.Returning++
				}
				held[runner] = true
				last := ""
				for _, u := range prev.Seats {
					if u.LastRunner == runner {
						last = u.Name
					}
				}
				if last == "" {
					continue
				}
				res.Recorded++
				if seatFree(prev, last) && slices.ContainsFunc(cfg.Seats.List(), func(sc lockstate.SeatConfig) bool { return sc.Name == last && sc.Carries(h.LabelList()) }) {
					res.AffinityEligible++
				}
				if h.Seat == last {
					res.AffinityHits++
				}
			}
		}
		prev = st
	}
}

// seatFree reports whether no holder or reservation of st records seat.
func seatFree(st *lockstate.State, seat string) bool {
	for _, h := range st.Holders {
		if h.Seat == seat {
			return false
		}
	}
	for _, r := range st.Reservations {
		if r.Seat == seat {
			return false
		}
	}
	return true
}
