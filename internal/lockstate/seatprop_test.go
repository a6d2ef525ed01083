package lockstate

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// seatWorld is one random schedule over named seats, labels and classes.
type seatWorld struct {
	t       *rapid.T
	s       *State
	cfgs    []Config // cfgs[0] names every seat; later ones drop some
	cfg     Config
	ids     []Identity
	labels  [][]string
	prio    []int
	now     time.Time
	passed  map[string]int // the oracle's own overtake count per waiter
	admits  int
	classed int // admissions that passed a lower class
	resN    int
}

// usableBy reports whether seat carries e's labels in cfg.
func usableBy(cfg Config, e Entry, seat string) bool {
	sc, ok := cfg.Seat(seat)
	return ok && sc.Carries(e.LabelList())
}

// checkAdmission is the oracle for one admission of holder h from prev
// (the rules stated independently of planSeats).
func (w *seatWorld) checkAdmission(prev, out *State, h Holder) {
	if h.Seat == "" {
		w.t.Fatalf("%s admitted without a seat", h.HolderID)
	}
	sc, ok := w.cfg.Seat(h.Seat)
	if !ok {
		w.t.Fatalf("%s admitted to seat %s the config does not name", h.HolderID, h.Seat)
	}
	if !sc.Carries(h.LabelList()) {
		w.t.Fatalf("%s (labels %q) admitted to seat %s carrying %v", h.HolderID, h.Labels, h.Seat, sc.Labels)
	}
	reclaim := slices.ContainsFunc(prev.Reservations, func(r Reservation) bool {
		return r.State == ReservationQuarantine && r.RunnerID == h.RunnerID
	})
	if reclaim {
		return
	}
	busy := map[string]bool{}
	for _, x := range prev.Holders {
		busy[x.RunnerID] = true
	}
	for _, r := range prev.Reservations {
		busy[r.RunnerID] = true
	}
	pos := QueuePosition(prev, h.HolderID) - 1
	me := prev.Queue[pos]
	seen := map[string]bool{}
	for i, q := range prev.Queue {
		first := !seen[q.RunnerID]
		seen[q.RunnerID] = true
		if i == pos || !usableBy(w.cfg, q, h.Seat) {
			continue
		}
		if i < pos {
			if q.RunnerID == h.RunnerID {
				w.t.Fatalf("%s admitted ahead of %s on its own runner", h.HolderID, q.HolderID)
			}
			if first && !busy[q.RunnerID] && freeSeatFor(w.cfg, out, q) {
				continue // a seat is left for it: polling later, not displaced
			}
			if first && slices.ContainsFunc(out.Reservations, func(r Reservation) bool {
				return r.State == ReservationQuarantine && r.RunnerID == q.RunnerID && usableBy(w.cfg, q, r.Seat)
			}) {
				continue // reclaims its own quarantine: waits for its poll, not a seat
			}
			w.passed[q.HolderID]++
			if q.Overtakes >= w.cfg.MaxOvertakes || w.passed[q.HolderID] > w.cfg.MaxOvertakes {
				w.t.Fatalf("%s admitted past %s, overtaken %d times (field %d) > maxOvertakes %d", h.HolderID, q.HolderID, w.passed[q.HolderID], q.Overtakes, w.cfg.MaxOvertakes)
			}
			if q.Priority < me.Priority {
				w.classed++
			}
		}
		// Priority inversion: a higher class that could take this seat,
		// free to run, not held back by a barrier queued before it.
		if q.Priority > me.Priority && first && !busy[q.RunnerID] && !freeSeatFor(w.cfg, out, q) {
			barred := false
			for _, b := range prev.Queue[:i] {
				if b.Overtakes >= w.cfg.MaxOvertakes && usableBy(w.cfg, b, h.Seat) {
					barred = true
				}
			}
			if !barred && !(i > pos && me.Overtakes >= w.cfg.MaxOvertakes) {
				w.t.Fatalf("priority inversion: %s (class %d) took %s while %s (class %d) could", h.HolderID, me.Priority, h.Seat, q.HolderID, q.Priority)
			}
		}
	}
}

// freeSeatFor reports whether s leaves a configured seat no holder or
// reservation records that carries e's labels.
func freeSeatFor(cfg Config, s *State, e Entry) bool {
	used := map[string]bool{}
	for _, h := range s.Holders {
		used[h.Seat] = true
	}
	for _, r := range s.Reservations {
		used[r.Seat] = true
	}
	for _, sc := range cfg.Seats.List() {
		if !used[sc.Name] && sc.Carries(e.LabelList()) {
			return true
		}
	}
	return false
}

// invariants holds on every state: holders within the seats, seats unique
// (validateState refuses a shared seat, so Encode proves it), overtakes
// within the bound.
func (w *seatWorld) invariants(s *State) {
	if _, err := Encode(s); err != nil {
		w.t.Fatalf("invalid state: %v", err)
	}
	if len(s.Holders) > w.cfgs[0].Seats.Len() {
		w.t.Fatalf("%d holders on %d seats", len(s.Holders), w.cfgs[0].Seats.Len())
	}
	for _, q := range s.Queue {
		if q.Overtakes > w.cfg.MaxOvertakes {
			w.t.Fatalf("%s overtakes %d > %d", q.HolderID, q.Overtakes, w.cfg.MaxOvertakes)
		}
	}
}

func (w *seatWorld) acquire(i int) {
	id := w.ids[i]
	if HolderIndex(w.s, id.HolderID) >= 0 {
		return
	}
	out, d, err := Acquire(w.s, w.cfg, AcquireRequest{Identity: id, Lease: lease, Labels: w.labels[i], Priority: w.prio[i]}, w.now)
	if err != nil {
		if CodeOf(err) == CodeNoMatchingSeat {
			return // a live config change left no seat for its labels
		}
		w.t.Fatalf("acquire %s: %v", id.HolderID, err)
	}
	if d.Outcome == OutcomeAdmitted {
		w.admits++
		prev, _ := PruneExpiredCooldowns(w.s, w.now)
		if QueuePosition(prev, id.HolderID) == 0 {
			// Joined and admitted in one write: behind everyone.
			e := id.entry(6, w.now)
			e.Labels, e.Priority = JoinLabels(w.labels[i]), w.prio[i]
			prev.Queue = append(prev.Queue, e)
		}
		w.checkAdmission(prev, out, out.Holders[HolderIndex(out, id.HolderID)])
		delete(w.passed, id.HolderID)
	}
	w.invariants(out)
	w.s = out
}

func (w *seatWorld) release(i int, report Report) {
	id := w.ids[i]
	if HolderIndex(w.s, id.HolderID) < 0 {
		return
	}
	req := cleanupReq(id, report)
	w.resN++
	req.ReservationID = fmt.Sprintf("res-%d", w.resN)
	out, _, err := Cleanup(w.s, w.cfg, req, w.now)
	if err != nil {
		w.t.Fatalf("cleanup %s: %v", id.HolderID, err)
	}
	w.invariants(out)
	w.s = out
}

func TestPropertySeats(t *testing.T) {
	t.Parallel()
	var admits, classed int
	rapid.Check(t, func(rt *rapid.T) {
		all := []string{"plus", "pro", "win"}
		n := rapid.IntRange(1, 4).Draw(rt, "seats")
		var seats []SeatConfig
		for k := range n {
			ls := rapid.SliceOfNDistinct(rapid.SampledFrom(all), 1, 2, rapid.ID[string]).Draw(rt, "seatLabels")
			slices.Sort(ls)
			seats = append(seats, SeatConfig{Name: fmt.Sprintf("seat-%d", k), Labels: ls})
		}
		k := rapid.IntRange(0, 3).Draw(rt, "maxOvertakes")
		cfgs := []Config{cfgSeats(k, seats...)}
		if n > 1 {
			cfgs = append(cfgs, cfgSeats(k, seats[:n-1]...), cfgSeats(k, seats[1:]...))
		}
		for i := range cfgs {
			cfgs[i].Priority = PriorityConfig{Max: 9}
			cfgs[i].ReleaseCooldownSeconds = rapid.SampledFrom([]int{0, 0, 30}).Draw(rt, "cooldown")
		}
		w := &seatWorld{t: rt, s: stateAt(6), cfgs: cfgs, cfg: cfgs[0], now: t0, passed: map[string]int{}}
		runners := rapid.IntRange(1, 6).Draw(rt, "runners")
		exist := cfgs[0].SeatLabels()
		for i := range rapid.IntRange(2, 10).Draw(rt, "jobs") {
			w.ids = append(w.ids, ident(i+1, fmt.Sprintf("runner-%d", rapid.IntRange(1, runners).Draw(rt, "runner"))))
			var want []string
			if rapid.Bool().Draw(rt, "labelled") {
				sc := rapid.SampledFrom(seats).Draw(rt, "forSeat")
				want = []string{rapid.SampledFrom(sc.Labels).Draw(rt, "label")}
			}
			_ = exist
			w.labels = append(w.labels, want)
			w.prio = append(w.prio, rapid.SampledFrom([]int{0, 0, 1, 5}).Draw(rt, "priority"))
		}
		for range rapid.IntRange(1, 120).Draw(rt, "steps") {
			i := rapid.IntRange(0, len(w.ids)-1).Draw(rt, "who")
			switch a := rapid.IntRange(0, 9).Draw(rt, "action"); {
			case a <= 5:
				w.acquire(i)
			case a <= 7:
				w.release(i, rapid.SampledFrom([]Report{confirmed, confirmed, confirmed, confirmed, confirmed, unproven}).Draw(rt, "report"))
			case a == 8:
				w.cfg = rapid.SampledFrom(w.cfgs).Draw(rt, "config")
			default:
				w.now = w.now.Add(time.Duration(rapid.IntRange(1, 60).Draw(rt, "advance")) * time.Second)
			}
		}
		admits += w.admits
		classed += w.classed
	})
	t.Logf("admissions %d, of which passed a lower class %d", admits, classed)
	if !t.Failed() && (admits == 0 || classed == 0) {
		t.Errorf("no schedule admitted past a lower class: the property is vacuous")
	}
}
