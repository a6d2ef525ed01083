package history

import (
	"sort"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Window bounds a report by commit time: [Since, Until). A zero bound is
// open (the first or last commit).
type Window struct {
	Since, Until time.Time
}

// Stats is the seat-demand telemetry of one lock over a window, computed
// from the verified steps.
//
// Time series and rates use each commit's time (stepTime: the state's
// updatedAt when it agrees with GitHub's commit time, which has only whole
// seconds); waits and holds use the state's own timestamps, each taken by
// one writer: wait = acquiredAt − queuedAt of the admitted holder (its
// acquire invocation started at queuedAt), hold = the releasing write's
// clock − acquiredAt.
type Stats struct {
	Lock string    `json:"lock"`
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Commits is the number of commits inside the window.
	Commits int `json:"commits"`
	// Seats is maxHolders in force at the end of the window.
	Seats int `json:"seats"`

	Admissions int `json:"admissions"`
	// Joins counts queue entries created (a job that was admitted at once
	// never joins).
	Joins int `json:"joins"`
	// GaveUp counts waiters that left the queue by their own cleanup before
	// admission: an acquire timeout or a cancelled job.
	GaveUp int `json:"gave_up"`
	// DroppedWaiters counts waiters the reaper removed (their run ended).
	DroppedWaiters int `json:"dropped_waiters"`
	// Releases counts holder removals by the core's typed result
	// (cooldown-started, quarantined, released, retracted,
	// global-quarantined, stale-holder-quarantined, stale-holder-freed).
	Releases map[string]int `json:"releases"`
	// ReaperQuarantines counts stale holders the reaper quarantined or
	// freed.
	ReaperQuarantines int `json:"reaper_quarantines"`
	// Recoveries counts operator recoveries of a quarantine; AutoRecoveries
	// the reaper's; Reclaims same-runner quarantine reclaims.
	Recoveries     int `json:"recoveries"`
	AutoRecoveries int `json:"auto_recoveries"`
	Reclaims       int `json:"reclaims"`
	// Incidents counts account incidents raised; IncidentRecoveries those
	// recovered.
	Incidents          int `json:"incidents"`
	IncidentRecoveries int `json:"incident_recoveries"`

	// Wait is how long every job that waited in the window waited: an
	// admitted job until its admission, a job that gave up (its own timeout
	// or cancellation) until it left, and a job still queued at the end of
	// the window so far. AdmittedWait is the admitted jobs' alone (what the
	// what-if replay compares with), GaveUpWait the others'.
	Wait         Dist `json:"wait"`
	AdmittedWait Dist `json:"admitted_wait"`
	GaveUpWait   Dist `json:"gave_up_wait"`
	// StillWaiting counts jobs queued at the end of the window.
	StillWaiting int  `json:"still_waiting"`
	Hold         Dist `json:"hold"`
	// Utilization is holder seat-time over seat capacity-time;
	// ReservedShare is reservation seat-time (cooldowns and quarantines)
	// over capacity-time.
	Utilization   float64 `json:"utilization"`
	ReservedShare float64 `json:"reserved_share"`
	// MaxQueue is the longest queue seen.
	MaxQueue int `json:"max_queue"`

	Series            []Point     `json:"series"`
	AdmissionsPerHour []HourCount `json:"admissions_per_hour"`
	Repositories      []RepoStats `json:"repositories"`
	// Classes, LabelSets and SeatUse (issue 25; only when the window saw a
	// named seat, a seat label or a priority class) are the admitted jobs'
	// waits per priority class (highest first) and per label set, and each
	// named seat's utilization and affinity hits (seatstats.go).
	Classes   []GroupStats `json:"classes,omitempty"`
	LabelSets []GroupStats `json:"label_sets,omitempty"`
	SeatUse   []SeatStats  `json:"seat_use,omitempty"`

	// Jobs are the admitted jobs of the window with their observed arrival
	// and hold (the what-if replay's input); GaveUpJobs are not replayed.
	Jobs []ReplayJob `json:"-"`
	// Schema and Config are the state schema and config at the end of the
	// window (the replay's lock).
	Schema int              `json:"schema"`
	Config lockstate.Config `json:"-"`
}

// Point is the lock after one commit.
type Point struct {
	Time         time.Time `json:"time"`
	Holders      int       `json:"holders"`
	Reservations int       `json:"reservations"`
	Queue        int       `json:"queue"`
	Seats        int       `json:"seats"`
}

// HourCount is the admissions of one hour (UTC).
type HourCount struct {
	Hour       time.Time `json:"hour"`
	Admissions int       `json:"admissions"`
}

// RepoStats is one consumer repository's share.
type RepoStats struct {
	Repository string `json:"repository"`
	Admissions int    `json:"admissions"`
	GaveUp     int    `json:"gave_up"`
	Wait       Dist   `json:"wait"`
	Hold       Dist   `json:"hold"`
}

// lastQueued returns the state in force at until: the last step (or the
// base) at or before it.
func lastQueued(base *Step, steps []Step, until time.Time) *lockstate.State {
	var out *lockstate.State
	var prev time.Time
	if base != nil && base.State != nil {
		out, prev = base.State, stepTime(*base, time.Time{})
	}
	for _, s := range steps {
		t := stepTime(s, prev)
		prev = t
		if t.After(until) {
			break
		}
		if s.State != nil {
			out = s.State
		}
	}
	return out
}

// stepTime is when a step happened on the report's time axis: the state's
// own updatedAt (millisecond precision) when it agrees with GitHub's commit
// time (whole seconds) within ClockSkewNote, else the commit time, and
// never before the previous step (a writer's clock may lag).
func stepTime(s Step, prev time.Time) time.Time {
	t := s.Commit.Time
	if s.State != nil {
		if u, ok := lockstate.ParseTime(s.State.UpdatedAt); ok && absDur(u.Sub(t)) <= ClockSkewNote {
			t = u
		}
	}
	if t.Before(prev) {
		t = prev
	}
	return t
}

type openHold struct {
	acquired time.Time
	job      int // index in Stats.Jobs, -1 outside the window
}

// Compute derives the statistics of w from base (the version before the
// first step, nil at the file's creation; Result.Base) and steps (the
// verified steps after it).
func Compute(lock string, base *Step, steps []Step, w Window) *Stats {
	st := &Stats{Lock: lock, Releases: map[string]int{}}
	st.From, st.To = w.Since, w.Until
	if st.From.IsZero() {
		switch {
		case len(steps) > 0:
			st.From = stepTime(steps[0], time.Time{})
		case base != nil:
			st.From = stepTime(*base, time.Time{})
		}
	}
	if st.To.IsZero() && len(steps) > 0 {
		var t time.Time
		for _, s := range steps {
			t = stepTime(s, t)
		}
		st.To = t
	}
	if st.To.Before(st.From) {
		st.To = st.From
	}
	in := func(t time.Time) bool {
		return !t.Before(st.From) && (w.Until.IsZero() && !t.After(st.To) || t.Before(st.To))
	}

	type repoAcc struct {
		waits, holds []time.Duration
		admissions   int
		gaveUp       int
	}
	repos := map[string]*repoAcc{}
	repo := func(name string) *repoAcc {
		if repos[name] == nil {
			repos[name] = &repoAcc{}
		}
		return repos[name]
	}
	var waits, gaveUpWaits, holds []time.Duration
	open := map[string]openHold{}
	hours := map[time.Time]int{}
	var busy, reserved, capacity float64
	var last *Point
	var lastState *lockstate.State
	seats := newSeatAcc()
	if base != nil && base.State != nil {
		lastState = base.State
		p := Point{Time: stepTime(*base, time.Time{}), Holders: len(base.State.Holders), Reservations: len(base.State.Reservations),
			Queue: len(base.State.Queue), Seats: max(base.Seats, 1)}
		last = &p
		st.Schema, st.Config, st.Seats = base.State.SchemaVersion, base.Config, p.Seats
		for _, h := range base.State.Holders {
			acq, _ := lockstate.ParseTime(h.AcquiredAt)
			open[h.HolderID] = openHold{acquired: acq, job: -1}
		}
	}
	accrue := func(until time.Time) {
		if last == nil {
			return
		}
		from := last.Time
		if from.Before(st.From) {
			from = st.From
		}
		if until.After(st.To) {
			until = st.To
		}
		if dt := until.Sub(from).Seconds(); dt > 0 {
			busy += float64(last.Holders) * dt
			reserved += float64(last.Reservations) * dt
			capacity += float64(last.Seats) * dt
			seats.accrue(lastState, dt)
		}
	}
	var prevT time.Time
	if last != nil {
		prevT = last.Time
	}
	for _, s := range steps {
		t := stepTime(s, prevT)
		prevT = t
		if !w.Until.IsZero() && !t.Before(w.Until) {
			break
		}
		if s.State == nil {
			continue
		}
		prev := s.Prev
		if prev == nil {
			prev = lockstate.Empty(lock)
		}
		accrue(t)
		p := Point{Time: t, Holders: len(s.State.Holders), Reservations: len(s.State.Reservations), Queue: len(s.State.Queue), Seats: max(s.Seats, 1)}
		last, lastState = &p, s.State
		st.Schema, st.Config = s.State.SchemaVersion, s.Config
		st.Seats = p.Seats
		inside := in(t)
		if inside {
			st.Commits++
			st.Series = append(st.Series, p)
			st.MaxQueue = max(st.MaxQueue, p.Queue)
		}
		d := diffStates(prev, s.State)
		admitted := map[string]bool{}
		for _, h := range d.addedHolders {
			admitted[h.HolderID] = true
			acq, _ := lockstate.ParseTime(h.AcquiredAt)
			oh := openHold{acquired: acq, job: -1}
			if inside {
				st.Admissions++
				hours[t.UTC().Truncate(time.Hour)]++
				r := repo(h.Repository)
				r.admissions++
				wait := time.Duration(0)
				if q, ok := lockstate.ParseTime(h.QueuedAt); ok && acq.After(q) {
					wait = acq.Sub(q)
				}
				waits = append(waits, wait)
				r.waits = append(r.waits, wait)
				seats.admit(h, prev, wait)
				arrival := acq.Add(-wait)
				oh.job = len(st.Jobs)
				st.Jobs = append(st.Jobs, ReplayJob{Arrival: arrival, Runner: h.RunnerID, Repository: h.Repository, Wait: wait, Release: ReleaseConfirmed, Labels: h.Labels, Priority: h.Priority})
				if s.Result == "reclaimed" {
					st.Reclaims++
				}
			}
			open[h.HolderID] = oh
		}
		if inside {
			st.Joins += len(d.addedQueue)
			if d.incidentCreated != nil {
				st.Incidents++
			}
			switch s.Kind {
			case KindRecover:
				st.Recoveries++
			case KindRecoverIncident:
				st.IncidentRecoveries++
			case KindReap:
				for _, r := range d.changedRes {
					if strings.HasPrefix(r.Reason, lockstate.ReasonAutoRecoverPrefix) {
						st.AutoRecoveries++
					}
				}
				for _, r := range d.removedRes {
					if r.State == lockstate.ReservationQuarantine {
						st.AutoRecoveries++
					}
				}
			}
		}
		for _, e := range d.removedQueue {
			if admitted[e.HolderID] || !inside {
				continue
			}
			if s.Kind == KindReap {
				st.DroppedWaiters++
			} else {
				st.GaveUp++
				repo(e.Repository).gaveUp++
				left := s.Now
				if left.IsZero() {
					left = t
				}
				if q, ok := lockstate.ParseTime(e.QueuedAt); ok && left.After(q) {
					gaveUpWaits = append(gaveUpWaits, left.Sub(q))
				}
			}
		}
		end := s.Now
		if end.IsZero() {
			end = t
		}
		for _, h := range d.removedHolders {
			oh, ok := open[h.HolderID]
			delete(open, h.HolderID)
			if !ok || oh.acquired.IsZero() {
				continue
			}
			hold := max(end.Sub(oh.acquired), 0)
			result := s.Result
			if s.Kind == KindReap && inside {
				st.ReaperQuarantines++
			}
			if oh.job < 0 {
				continue
			}
			holds = append(holds, hold)
			repo(h.Repository).holds = append(repo(h.Repository).holds, hold)
			st.Releases[result]++
			j := &st.Jobs[oh.job]
			j.Hold, j.Released = hold, true
			if r, ok := d.reservationFor(h.HolderID); ok && r.State == lockstate.ReservationQuarantine {
				j.Release = ReleaseQuarantined
				j.reservation = r.ReservationID
			}
		}
		// A quarantine's life: from the release to its recovery or
		// reclaim (the replay holds the seat that long).
		for _, r := range append(append([]lockstate.Reservation(nil), d.removedRes...), d.changedRes...) {
			if old, ok := d.prevRes[r.ReservationID]; !ok || old.State != lockstate.ReservationQuarantine {
				continue
			}
			for i := range st.Jobs {
				if st.Jobs[i].reservation == r.ReservationID && st.Jobs[i].Quarantine == 0 {
					if created, ok := lockstate.ParseTime(r.CreatedAt); ok {
						st.Jobs[i].Quarantine = max(end.Sub(created), time.Second)
					}
				}
			}
		}
	}
	accrue(st.To)
	// Holders still seated at the end: their hold so far.
	for _, oh := range open {
		if oh.job >= 0 && !oh.acquired.IsZero() {
			st.Jobs[oh.job].Hold = max(st.To.Sub(oh.acquired), 0)
		}
	}
	if capacity > 0 {
		st.Utilization, st.ReservedShare = busy/capacity, reserved/capacity
	}
	seats.finish(st, st.To.Sub(st.From).Seconds())
	// Jobs still queued at the end of the window waited at least this long.
	var stillWaits []time.Duration
	if last != nil && !last.Time.After(st.To) {
		if s := lastQueued(base, steps, st.To); s != nil {
			for _, e := range s.Queue {
				if q, ok := lockstate.ParseTime(e.QueuedAt); ok && st.To.After(q) {
					stillWaits = append(stillWaits, st.To.Sub(q))
				}
			}
			st.StillWaiting = len(s.Queue)
		}
	}
	st.AdmittedWait, st.GaveUpWait = NewDist(waits), NewDist(gaveUpWaits)
	st.Wait = NewDist(append(append(append([]time.Duration(nil), waits...), gaveUpWaits...), stillWaits...))
	st.Hold = NewDist(holds)
	for h, n := range hours {
		st.AdmissionsPerHour = append(st.AdmissionsPerHour, HourCount{Hour: h, Admissions: n})
	}
	sort.Slice(st.AdmissionsPerHour, func(i, j int) bool { return st.AdmissionsPerHour[i].Hour.Before(st.AdmissionsPerHour[j].Hour) })
	for name, r := range repos {
		st.Repositories = append(st.Repositories, RepoStats{Repository: name, Admissions: r.admissions, GaveUp: r.gaveUp, Wait: NewDist(r.waits), Hold: NewDist(r.holds)})
	}
	sort.Slice(st.Repositories, func(i, j int) bool { return st.Repositories[i].Repository < st.Repositories[j].Repository })
	return st
}
