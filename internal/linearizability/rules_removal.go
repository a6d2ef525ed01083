package linearizability

// The removal rules of the sequential specification: who may remove a holder or
// waiter, how reservations (quarantines and cooldowns) are created and ended,
// and the incident latch.

import (
	"fmt"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// removals (R-S3, R-S4): every holder or waiter that left without being
// admitted was removed by someone entitled to it.
func (j *judge) removals() {
	for _, h := range j.removedHolders {
		if why := j.mayRemove(h.Entry, &h); why != "" {
			j.add(CodeRemovalUnauthorized, "holder %s@%s removed by %s: %s", esc(h.HolderID), esc(h.RunAttempt), esc(j.st.Actor.String()), why)
		}
	}
	for _, e := range j.prev.Queue {
		if h, ok := j.admittedHolder(e.HolderID); ok && (schemaOf(j.next) < 3 || attemptAtLeast(h.RunAttempt, e.RunAttempt)) {
			continue // admitted (an older attempt's entry is taken over by its rerun)
		}
		if ni, still := j.nextQueue[e.HolderID]; still && attemptAtLeast(j.next.Queue[ni].RunAttempt, e.RunAttempt) {
			continue // kept, or refreshed by a newer attempt (judged as a join)
		}
		if why := j.mayRemove(e, nil); why != "" {
			j.add(CodeRemovalUnauthorized, "queue entry %s@%s removed by %s: %s", esc(e.HolderID), esc(e.RunAttempt), esc(j.st.Actor.String()), why)
		}
	}
}

func (j *judge) admittedHolder(holderID string) (lockstate.Holder, bool) {
	for _, h := range j.admitted {
		if h.HolderID == holderID {
			return h, true
		}
	}
	return lockstate.Holder{}, false
}

// mayRemove returns why the actor may not remove e ("" when it may); h is
// the holder when e was admitted.
func (j *judge) mayRemove(e lockstate.Entry, h *lockstate.Holder) string {
	a := j.st.Actor
	switch a.Kind {
	case ActorJob, ActorOldClient:
		_, why := j.jobOwns(e)
		return why
	case ActorReaper:
		finished := j.st.Evidence.RunFinished(e.RunID, e.RunAttempt) || (e.JobID != "" && j.st.Evidence.JobCompleted(e.JobID))
		if h == nil {
			if finished {
				return ""
			}
			return "its run attempt was neither terminal nor superseded and its job had not completed"
		}
		q := j.reapQuarantine(*h)
		if schemaOf(j.next) >= 4 && q == nil {
			return "the reaper freed a holder without quarantining it"
		}
		if finished || leaseExpired(h.ExpiresAt, j.st.At) {
			return ""
		}
		return "its run and job were still active and its lease had not expired"
	}
	return string(a.Kind) + " never removes holders or waiters"
}

// reapQuarantine is the quarantine the reaper made of h in this write.
func (j *judge) reapQuarantine(h lockstate.Holder) *lockstate.Reservation {
	prev := reservationIndex(j.prev)
	for _, r := range j.next.Reservations {
		if _, old := prev[r.ReservationID]; old {
			continue
		}
		if r.HolderID == h.HolderID && r.RunAttempt == h.RunAttempt && r.RunnerID == h.RunnerID &&
			r.State == lockstate.ReservationQuarantine && strings.HasPrefix(r.Reason, lockstate.ReasonReapPrefix) {
			rr := r
			return &rr
		}
	}
	return nil
}

func leaseExpired(expiresAt string, at time.Time) bool {
	exp, ok := lockstate.ParseTime(expiresAt)
	return ok && !at.IsZero() && exp.Before(at)
}

func reservationIndex(s *lockstate.State) map[string]lockstate.Reservation {
	m := make(map[string]lockstate.Reservation, len(s.Reservations))
	for _, r := range s.Reservations {
		m[r.ReservationID] = r
	}
	return m
}

// reservations: a reservation is created only from a holder removed in the
// same write (its job's release or post step, the reaper) or by incident
// recovery; a quarantine ends only by a same-runner reclaim, the reaper's
// auto-recovery of a finished run after the grace, or recovery of exactly
// the reservation the operator named. Cooldowns may be pruned by anyone.
func (j *judge) reservations() {
	a := j.st.Actor
	prev, next := reservationIndex(j.prev), reservationIndex(j.next)
	for _, n := range j.next.Reservations {
		p, old := prev[n.ReservationID]
		switch {
		case !old:
			if why := j.mayCreate(n); why != "" {
				j.add(CodeReservation, "reservation %s (%s %s, runner %s) created by %s: %s", esc(n.ReservationID), n.State, esc(n.HolderID), esc(n.RunnerID), esc(a.String()), why)
			}
		case p.State == lockstate.ReservationCooldown && n.State == lockstate.ReservationQuarantine:
			j.add(CodeReservation, "cooldown %s turned back into a quarantine by %s", esc(n.ReservationID), esc(a.String()))
		}
	}
	for _, p := range j.prev.Reservations {
		if p.State != lockstate.ReservationQuarantine {
			continue
		}
		if n, ok := next[p.ReservationID]; ok && n.State == lockstate.ReservationQuarantine {
			continue
		}
		if why := j.mayEndQuarantine(p, next); why != "" {
			j.add(CodeReservation, "quarantine %s of %s (runner %s) ended by %s: %s", esc(p.ReservationID), esc(p.HolderID), esc(p.RunnerID), esc(a.String()), why)
		}
	}
}

func (j *judge) mayCreate(n lockstate.Reservation) string {
	a := j.st.Actor
	switch a.Kind {
	case ActorJob, ActorOldClient:
		for _, h := range j.removedHolders {
			if ok, _ := j.jobOwns(h.Entry); ok && sameMachineOrRunner(h.RunnerID, h.MachineID, n.RunnerID, n.MachineID) {
				return ""
			}
		}
		return "no holder of this job on that runner (or machine) left in the same write"
	case ActorReaper:
		for _, h := range j.removedHolders {
			if q := j.reapQuarantine(h); q != nil && q.ReservationID == n.ReservationID {
				return ""
			}
		}
		return "not the quarantine of a holder the reaper removed"
	case ActorRecoverIncident:
		inc := j.prev.ActiveIncident
		if inc != nil && inc.IncidentID == a.Target && n.State == lockstate.ReservationCooldown && n.RunnerID == strings.TrimSpace(inc.RunnerID) {
			return ""
		}
		return "not the recovery cooldown of the named incident's runner"
	}
	return string(a.Kind) + " creates no reservations"
}

func (j *judge) mayEndQuarantine(q lockstate.Reservation, next map[string]lockstate.Reservation) string {
	a := j.st.Actor
	if _, kept := next[q.ReservationID]; !kept {
		for _, h := range j.admitted {
			if quarantineOf(q, h.Entry) {
				return "" // consumed by a same-runner or same-machine reclaim (judged as an admission)
			}
		}
	}
	switch a.Kind {
	case ActorRecover:
		if q.ReservationID == a.Target {
			return ""
		}
		return "the operator named " + esc(a.Target)
	case ActorReaper:
		created, ok := lockstate.ParseTime(q.CreatedAt)
		switch {
		case schemaOf(j.next) < 5:
			return "auto-recovery needs schema 5"
		case j.prev.ActiveIncident != nil:
			return "auto-recovery while an incident is active"
		case !ok || j.st.At.IsZero() || created.Add(j.r.QuarantineGrace).After(j.st.At):
			return fmt.Sprintf("auto-recovered before the %s grace", j.r.QuarantineGrace)
		case !j.st.Evidence.RunFinished(q.RunID, q.RunAttempt):
			return "its owning run was still active (time alone is no proof)"
		}
		return ""
	}
	return string(a.Kind) + " never ends a quarantine except by its own reclaim"
}

// incident (R-S8): an incident is raised only by a job's blocked release for
// its own run, cleared only by recovery naming it, and never replaced.
func (j *judge) incident() {
	a := j.st.Actor
	var pi, ni *lockstate.Incident
	if schemaOf(j.prev) >= 5 {
		pi = j.prev.ActiveIncident
	}
	if schemaOf(j.next) >= 5 {
		ni = j.next.ActiveIncident
	}
	switch {
	case pi == nil && ni != nil:
		if !a.isJob() || !strings.HasPrefix(a.HolderID, ni.Repository+":"+ni.RunID+":"+ni.Job+":") {
			j.add(CodeIncident, "incident %s raised by %s", esc(ni.IncidentID), esc(a.String()))
		}
	case pi != nil && ni == nil:
		if a.Kind != ActorRecoverIncident || a.Target != pi.IncidentID {
			j.add(CodeIncident, "incident %s cleared by %s", esc(pi.IncidentID), esc(a.String()))
		}
	case pi != nil && ni != nil && pi.IncidentID != ni.IncidentID:
		j.add(CodeIncident, "incident %s replaced by %s", esc(pi.IncidentID), esc(ni.IncidentID))
	}
}
