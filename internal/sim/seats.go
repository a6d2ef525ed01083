package sim

// Seat seeds (issue 25): a share of the seeds that reach schema 6 run a lock
// whose config names 2-4 seats with 1-2 labels each and (most of them) a
// priority config; their jobs ask for a label set (or none) and a priority
// class (mostly 0), some of them in pull-request runs. While jobs wait, the
// operator adds a seat or removes one (a held one drains). Every choice
// comes from a stream of its own, so a seed that is not a seat seed draws
// exactly what it drew before.

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// seatStream is the PCG stream of the seat seeds' choices.
const seatStream = 0x5ea75ea7

// seatShare: one in seatShare of the seeds whose target schema is 6 is a
// seat seed.
const seatShare = 3

// seatConfigSlack is how long after a config change a job may still act on
// the previous config: the action caches the config for
// BUILD_LOCK_CONFIG_TTL_MS (60 s in the simulation) and a lagging replica
// may serve an older main; a new holder on a removed seat later than this
// after the removal is a violation (a removed seat drains).
const seatConfigSlack = 5 * time.Minute

// unknownLabel is a label no seat carries: acquire must refuse it with
// no-matching-seat before writing.
const unknownLabel = "ultra"

// seatWorld is what a seat seed chose and what its operator changed.
type seatWorld struct {
	mu  sync.Mutex
	rng *rand.Rand
	// current is the seat list the config names now; all is every seat
	// any config named (a seat keeps its labels for the whole run).
	current []lockstate.SeatConfig
	all     []lockstate.SeatConfig
	// sets are the label sets jobs may ask for (each carried by a seat).
	sets     [][]string
	priority string // the config's "priority" member ("" = none)
	prioCfg  lockstate.PriorityConfig
	// removedAt / addedAt: when the config stopped / started naming a seat.
	removedAt map[string]time.Time
	addedAt   map[string]time.Time
	nextSeat  int
	// log is every live change, for the report's schedule.
	log []string
}

// chooseSeats decides whether the seed is a seat seed and, if so, its seats
// and priority config (c.Seats forces or forbids it).
func (s *sim) chooseSeats(c Config) {
	if s.schema < lockstate.FencedSchemaVersion || c.Seats < 0 {
		return
	}
	r := rand.New(rand.NewPCG(s.seed, seatStream))
	if r.IntN(seatShare) != 0 && c.Seats == 0 {
		return
	}
	w := &seatWorld{rng: r, removedAt: map[string]time.Time{}, addedAt: map[string]time.Time{}}
	n := 2 + r.IntN(3)
	kinds := []string{"pro", "plus"}
	for i := range n {
		labels := []string{kinds[min(i, 1)]}
		if i >= 2 {
			labels[0] = kinds[r.IntN(2)]
		}
		if r.IntN(3) == 0 {
			labels = append(labels, "gpu")
		}
		slices.Sort(labels)
		w.current = append(w.current, lockstate.SeatConfig{Name: fmt.Sprintf("seat-%d", i+1), Labels: labels})
	}
	w.nextSeat = n + 1
	w.all = slices.Clone(w.current)
	for _, sc := range w.current {
		for _, l := range sc.Labels {
			w.addSet([]string{l})
		}
		w.addSet(sc.Labels)
	}
	switch r.IntN(4) {
	case 1:
		w.priority, w.prioCfg = `{"max":9,"maxForPullRequests":0}`, lockstate.PriorityConfig{Max: 9}
	case 2:
		w.priority, w.prioCfg = `{"max":5,"maxForPullRequests":5}`, lockstate.PriorityConfig{Max: 5, MaxForPullRequests: 5}
	case 3:
		w.priority = fmt.Sprintf(`{"max":9,"maxForPullRequests":3,"repositories":["%s/game","%s/engine"]}`, owner, owner)
		w.prioCfg = lockstate.PriorityConfig{Max: 9, MaxForPullRequests: 3, Repositories: owner + "/game," + owner + "/engine"}
	}
	s.seats = w
	s.cfg.MaxHolders = len(w.current)
	s.cfg.Seats = lockstate.NewSeatList(w.current)
	s.cfg.Priority = w.prioCfg
	s.event("seat-config")
	s.sched = append(s.sched, fmt.Sprintf("seats %s priority %s", seatListString(w.current), cmpOr(w.priority, "none")))
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

func (w *seatWorld) addSet(set []string) {
	if !slices.ContainsFunc(w.sets, func(o []string) bool { return slices.Equal(o, set) }) {
		w.sets = append(w.sets, slices.Clone(set))
	}
}

func seatListString(seats []lockstate.SeatConfig) string {
	parts := make([]string, len(seats))
	for i, sc := range seats {
		parts[i] = sc.Name + "=" + strings.Join(sc.Labels, "+")
	}
	return strings.Join(parts, ",")
}

// seatMembers is the config's seats, maxHolders and priority members (a
// seat seed at level 6), or "" otherwise.
func (s *sim) seatMembers(level int) (string, int) {
	w := s.seats
	if w == nil || level < lockstate.FencedSchemaVersion {
		return "", s.cfg.MaxHolders
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	parts := make([]string, len(w.current))
	for i, sc := range w.current {
		parts[i] = fmt.Sprintf(`{"name":%q,"labels":["%s"]}`, sc.Name, strings.Join(sc.Labels, `","`))
	}
	out := `,"seats":[` + strings.Join(parts, ",") + `]`
	if w.priority != "" {
		out += `,"priority":` + w.priority
	}
	return out, len(w.current)
}

// seatRequest draws j's seat-labels and priority inputs (a seat seed only).
func (s *sim) seatRequest(j *job) {
	w := s.seats
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	switch r := w.rng.IntN(100); {
	case r < 4:
		j.labels = unknownLabel
	case r < 40:
	default:
		j.labels = strings.Join(w.sets[w.rng.IntN(len(w.sets))], ",")
	}
	switch r := w.rng.IntN(100); {
	case r < 70:
	case r < 92:
		j.priority = 5
	default:
		j.priority = 9
	}
}

// seatAllowed reports whether j's request passes the config's checks (its
// labels exist, its class is allowed).
func (s *sim) seatAllowed(j *job) (labelsOK, priorityOK bool) {
	labels, _ := lockstate.ParseLabelExpression(j.labels)
	cfg := lockstate.Config{Seats: lockstate.NewSeatList(s.seats.all), Priority: s.seats.prioCfg}
	caller := lockstate.PriorityCaller{Repository: owner + "/" + j.repo, PullRequest: j.pr > 0}
	return lockstate.CheckLabels(cfg, labels) == nil, lockstate.CheckPriority(cfg, caller, j.priority) == nil
}

// seatChanges is the operator's live change of the seat list: once the
// config asks for schema 6, after a while, it removes a seat (a held one
// when it can: it drains) or adds one, in a reviewed config change while
// jobs wait. A seat is removed only when every label set the jobs ask for
// stays carried by another seat, so no waiter's request is withdrawn.
func (s *sim) seatChanges() {
	w := s.seats
	if w == nil {
		return
	}
	w.mu.Lock()
	delay := time.Duration(w.rng.IntN(int(s.window/2/time.Second))) * time.Second
	changes := 1 + w.rng.IntN(2)
	w.mu.Unlock()
	s.sched = append(s.sched, fmt.Sprintf("seat changes %d after %s", changes, delay))
	// Every change lands inside the fault window, long before the audit.
	go func() {
		for int(s.cfgLevel.Load()) < lockstate.FencedSchemaVersion {
			if time.Since(s.t0) >= s.window {
				return
			}
			time.Sleep(30 * time.Second)
		}
		for range changes {
			time.Sleep(delay)
			if time.Since(s.t0) >= s.window {
				return
			}
			s.changeSeats()
			delay = time.Duration(5+s.intnSeat(10)) * time.Minute
		}
	}()
}

func (s *sim) intnSeat(n int) int {
	s.seats.mu.Lock()
	defer s.seats.mu.Unlock()
	return s.seats.rng.IntN(n)
}

// changeSeats removes or adds one seat and writes the config.
func (s *sim) changeSeats() {
	w := s.seats
	held := map[string]bool{}
	if st := s.currentState(); st != nil {
		for _, h := range st.Holders {
			held[h.Seat] = true
		}
	}
	w.mu.Lock()
	var removable []int
	for i := range w.current {
		rest := slices.Delete(slices.Clone(w.current), i, i+1)
		ok := len(rest) > 0
		for _, set := range w.sets {
			if !slices.ContainsFunc(rest, func(sc lockstate.SeatConfig) bool { return sc.Carries(set) }) {
				ok = false
			}
		}
		if ok {
			removable = append(removable, i)
		}
	}
	event := ""
	if len(removable) > 0 && w.rng.IntN(3) != 0 {
		pick := removable[w.rng.IntN(len(removable))]
		for _, i := range removable {
			if held[w.current[i].Name] {
				pick = i
			}
		}
		name := w.current[pick].Name
		w.current = slices.Delete(w.current, pick, pick+1)
		w.removedAt[name] = time.Now()
		event = "seat-removed"
		if held[name] {
			event = "seat-removed-held"
		}
	} else {
		sc := lockstate.SeatConfig{Name: fmt.Sprintf("seat-%d", w.nextSeat), Labels: slices.Clone(w.current[w.rng.IntN(len(w.current))].Labels)}
		w.nextSeat++
		w.current = append(w.current, sc)
		w.all = append(w.all, sc)
		w.addedAt[sc.Name] = time.Now()
		event = "seat-added"
	}
	w.log = append(w.log, fmt.Sprintf("%s at %s: %s", event, time.Since(s.t0).Round(time.Second), seatListString(w.current)))
	w.mu.Unlock()
	s.writeConfig(int(s.cfgLevel.Load()))
	s.event(event)
}

// checkerSeats is what the checker judges seats by: every seat any config
// named (a seat keeps its labels) and the most seats any config named.
func (s *sim) checkerSeats() ([]lockstate.SeatConfig, int) {
	if s.seats == nil {
		return s.cfg.Seats.List(), s.cfg.MaxHolders
	}
	return s.seats.all, len(s.seats.all)
}

// auditSeats checks a seat seed's history (issue 25): no two holders or
// reservations record one seat; every holder's seat is a configured seat
// carrying its labels; a seat removed from the config takes no new holder
// (it drains) and an added one none before it was added; an acquire
// refused with no-matching-seat or priority-not-allowed wrote nothing, and
// a request the config cannot allow is never admitted. The overtaking
// bound and priority order are the checker's (checker.Input.Seats).
func (s *sim) auditSeats(states []*lockstate.State, times []time.Time, violate func(string, ...any)) {
	w := s.seats
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	byName := map[string]lockstate.SeatConfig{}
	for _, sc := range w.all {
		byName[sc.Name] = sc
	}
	quarantined := map[string]bool{}
	for i, st := range states {
		if st == nil || st.SchemaVersion < lockstate.FencedSchemaVersion {
			continue
		}
		t := times[i]
		used := map[string]string{}
		take := func(seat, who string) {
			if seat == "" {
				return
			}
			if other, dup := used[seat]; dup {
				violate("version %d: seat %s given twice (%s and %s)", i, seat, other, who)
			}
			used[seat] = who
		}
		var prev map[string]bool
		if i > 0 && states[i-1] != nil {
			prev = map[string]bool{}
			for _, h := range states[i-1].Holders {
				prev[h.HolderID+"@"+h.RunAttempt] = true
			}
		}
		for _, h := range st.Holders {
			take(h.Seat, "holder "+h.HolderID)
			if h.Seat == "" {
				continue
			}
			sc, ok := byName[h.Seat]
			switch {
			case !ok:
				violate("version %d: holder %s on seat %s, which no config named", i, h.HolderID, h.Seat)
			case !sc.Carries(h.LabelList()):
				violate("version %d: holder %s (labels %s) on seat %s, which carries %v", i, h.HolderID, h.Labels, h.Seat, sc.Labels)
			}
			if prev == nil || prev[h.HolderID+"@"+h.RunAttempt] {
				continue
			}
			s.event("seat-admission")
			if h.Priority > 0 {
				s.event("priority-admission")
			}
			if at, gone := w.removedAt[h.Seat]; gone && t.After(at.Add(seatConfigSlack)) {
				violate("version %d: %s admitted to seat %s at %s, removed from the config at %s (a removed seat drains)", i, h.HolderID, h.Seat, t.Format(time.RFC3339), at.Format(time.RFC3339))
			}
			if at, added := w.addedAt[h.Seat]; added && t.Before(at) {
				violate("version %d: %s admitted to seat %s at %s, before the config named it (%s)", i, h.HolderID, h.Seat, t.Format(time.RFC3339), at.Format(time.RFC3339))
			}
		}
		for _, r := range st.Reservations {
			take(r.Seat, "reservation "+r.ReservationID)
			if r.Seat != "" && r.State == lockstate.ReservationQuarantine && !quarantined[r.ReservationID] {
				quarantined[r.ReservationID] = true
				s.event("seat-quarantined")
			}
		}
	}

	refusals := map[string]bool{string(lockstate.CodeNoMatchingSeat): true, string(lockstate.CodePriorityNotAllowed): true}
	for _, j := range s.jobs {
		if j.oldCli {
			continue
		}
		labelsOK, prioOK := s.seatAllowed(j)
		j.mu.Lock()
		reason, acquired := j.acquireReason, !j.acquiredAt.IsZero()
		j.mu.Unlock()
		if reason == string(lockstate.CodeSeatConflict) || reason == string(lockstate.CodeInvalidSeat) {
			// Nobody in the simulation writes a malformed state, so the
			// core computed one: its own validation refused the write
			// (a seat given twice is caught before it is committed).
			violate("job %s: acquire failed with %s: the seat scan computed a state that gives one seat twice or records a malformed seat", j.actor(), reason)
		}
		if acquired && (!labelsOK || !prioOK) {
			violate("job %s (seat-labels %q, priority %d) was admitted, but the config allows neither", j.actor(), j.labels, j.priority)
		}
		if !refusals[reason] {
			continue
		}
		s.event("seat-refused-" + reason)
		if wrote := s.stateWrites(j.actor(), "acquire"); wrote > 0 {
			violate("job %s: acquire refused with %s but sent %d write(s) to the lock repository", j.actor(), reason, wrote)
		}
	}
}

// stateWrites counts the requests other than GET that actor's proc sent to
// the lock repository.
func (s *sim) stateWrites(actor, proc string) int {
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	n := 0
	for _, r := range s.rec.sends {
		if r.actor == actor && r.proc == proc && !strings.HasPrefix(r.route, "GET ") && strings.Contains(r.route, "/repos/"+owner+"/"+lockRepo+"/") {
			n++
		}
	}
	return n
}

// seatEnv adds j's seat inputs to a step environment.
func seatEnv(j *job, env map[string]string) {
	if j.labels != "" {
		env["INPUT_SEAT-LABELS"] = j.labels
	}
	if j.priority != 0 {
		env["INPUT_PRIORITY"] = strconv.Itoa(j.priority)
	}
}
