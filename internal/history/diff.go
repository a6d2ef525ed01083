package history

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// diff is what changed between two versions, by identity: holders and
// queue entries by holderId, reservations by reservationId. It only
// proposes candidate requests to the pure core; whether a transition is
// legitimate is decided by running the core and comparing its result with
// the version byte for byte.
type diff struct {
	addedHolders, removedHolders, changedHolders []lockstate.Holder // changed: the new version
	addedQueue, removedQueue, changedQueue       []lockstate.Entry  // changed: the new version
	addedRes, removedRes, changedRes             []lockstate.Reservation
	prevRes                                      map[string]lockstate.Reservation
	incidentCreated, incidentCleared             *lockstate.Incident
}

func diffStates(prev, next *lockstate.State) diff {
	var d diff
	ph := map[string]lockstate.Holder{}
	for _, h := range prev.Holders {
		ph[h.HolderID] = h
	}
	nh := map[string]bool{}
	for _, h := range next.Holders {
		nh[h.HolderID] = true
		old, ok := ph[h.HolderID]
		switch {
		case !ok:
			d.addedHolders = append(d.addedHolders, h)
		case old != h:
			if old.AcquiredAt != h.AcquiredAt || old.FencingToken != h.FencingToken {
				// A new admission of the same holderId (release and re-admit
				// in one write is impossible; treat as removed + added).
				d.removedHolders = append(d.removedHolders, old)
				d.addedHolders = append(d.addedHolders, h)
			} else {
				d.changedHolders = append(d.changedHolders, h)
			}
		}
	}
	for _, h := range prev.Holders {
		if !nh[h.HolderID] {
			d.removedHolders = append(d.removedHolders, h)
		}
	}
	pq := map[string]lockstate.Entry{}
	for _, e := range prev.Queue {
		if _, dup := pq[e.HolderID]; !dup {
			pq[e.HolderID] = e
		}
	}
	nq := map[string]bool{}
	for _, e := range next.Queue {
		if nq[e.HolderID] {
			continue
		}
		nq[e.HolderID] = true
		old, ok := pq[e.HolderID]
		switch {
		case !ok:
			d.addedQueue = append(d.addedQueue, e)
		case old != e:
			d.changedQueue = append(d.changedQueue, e)
		}
	}
	for id, e := range pq {
		if !nq[id] {
			d.removedQueue = append(d.removedQueue, e)
		}
	}
	d.prevRes = map[string]lockstate.Reservation{}
	for _, r := range prev.Reservations {
		d.prevRes[r.ReservationID] = r
	}
	nr := map[string]bool{}
	for _, r := range next.Reservations {
		nr[r.ReservationID] = true
		old, ok := d.prevRes[r.ReservationID]
		switch {
		case !ok:
			d.addedRes = append(d.addedRes, r)
		case old != r:
			d.changedRes = append(d.changedRes, r)
		}
	}
	for _, r := range prev.Reservations {
		if !nr[r.ReservationID] {
			d.removedRes = append(d.removedRes, r)
		}
	}
	switch {
	case prev.ActiveIncident == nil && next.ActiveIncident != nil:
		d.incidentCreated = next.ActiveIncident
	case prev.ActiveIncident != nil && next.ActiveIncident == nil:
		d.incidentCleared = prev.ActiveIncident
	}
	return d
}

// onlyOvertakes reports whether e differs from its previous version in
// overtakes alone (a passed waiter, not the caller).
func (d diff) onlyOvertakes(e lockstate.Entry, prev *lockstate.State) bool {
	for _, o := range prev.Queue {
		if o.HolderID == e.HolderID {
			o.Overtakes = e.Overtakes
			return o == e
		}
	}
	return false
}

// reservationFor returns the reservation this write added for holderID.
func (d diff) reservationFor(holderID string) (lockstate.Reservation, bool) {
	for _, r := range d.addedRes {
		if r.HolderID == holderID {
			return r, true
		}
	}
	return lockstate.Reservation{}, false
}

// identityOf is the caller identity that writes entry e. It is the one place
// that maps a recorded entry back to an acquire request: when entries gain
// identity fields, they are added here (and nowhere else).
func identityOf(e lockstate.Entry) lockstate.Identity {
	id := lockstate.Identity{
		HolderID: e.HolderID, Repository: e.Repository, Workflow: e.Workflow, Job: e.Job,
		RunID: e.RunID, RunAttempt: e.RunAttempt, RunURL: e.RunURL, RunnerID: e.RunnerID, JobID: e.JobID,
		RunnerName: e.RunnerName, RunnerOS: e.RunnerOS, RunnerArch: e.RunnerArch, MachineID: e.MachineID,
	}
	if id.RunnerID == "" {
		// A schema-2 entry that joined while an upgrade to runner
		// serialization was pending recorded the runner id its job gave.
		id.RunnerID = e.PendingRunnerID
	}
	if t, ok := lockstate.ParseTime(e.QueuedAt); ok {
		id.QueuedAt = t
	}
	return id
}

// nowCandidates are the writer clocks that may have produced next: the
// moments the core stamps (admission, reservation creation, incident
// report), and the store's updatedAt, which it sets right after the
// transition ran. availableAt − cooldown candidates are added by the
// recovery transitions that need them.
func nowCandidates(d diff, next *lockstate.State) []time.Time {
	var out []time.Time
	add := func(s string) {
		t, ok := lockstate.ParseTime(s)
		if !ok {
			return
		}
		for _, o := range out {
			if o.Equal(t) {
				return
			}
		}
		out = append(out, t)
	}
	for _, h := range d.addedHolders {
		add(h.AcquiredAt)
	}
	for _, r := range d.addedRes {
		add(r.CreatedAt)
	}
	if d.incidentCreated != nil {
		add(d.incidentCreated.ReportedAt)
	}
	add(next.UpdatedAt)
	return out
}
