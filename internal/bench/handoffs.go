package bench

import (
	"sort"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/checker"
)

// noticedHandoff is one handoff as the user feels it: a seat freed while a
// job waited, and the admitted job that took it (its acquire's exit ends
// the gap).
type noticedHandoff struct {
	holderID string
	freedAt  time.Time
	gap      time.Duration
}

// noticedHandoffs pairs every seat freed while some job waited with the
// next admission, measured to that job's notice (its acquire returned).
//
// A job waits from its arrival until the version that admits it, whether it
// is in the queue or outside it (a burst's paced job before its first
// write, docs/performance.md §11): a seat that sits free while a paced job
// sleeps is as idle to the user as one handed to a sleeping waiter, and the
// state alone does not show it (the queue is empty). A seat that was free
// before anyone waited is not a handoff: the job that takes it waits for
// its own acquire (job wait), not for a seat. An admission takes the
// oldest seat freed while someone waited, as the checker's handoffs do
// (seats are alike: "seat freed → next admission"), a seat free before
// anyone waited only when there is none; a seat freed while someone waited
// stops counting once nobody waits (the waiters took other seats).
//
// Seats are the config's maxHolders less holders and reservations, so a
// reaper's removal of a dead holder frees one and a quarantine does not.
// At schema ≤ 3 a direct handoff frees and takes a seat in one version: its
// gap is the admitted waiter's notice alone.
func noticedHandoffs(w *world, jobs []*simJob, versions []checker.Version, from, to time.Time) []noticedHandoff {
	type waiter struct {
		arrived time.Time
		gone    bool // never admitted and ended (cancelled or failed)
	}
	waiters := map[string]waiter{}
	for _, j := range jobs {
		waiters[j.holderID] = waiter{arrived: w.start.Add(j.arrival), gone: j.admitted.IsZero() && (j.cancelled || j.err != nil)}
	}
	noticed := noticedAt(jobs)
	admitted := map[string]bool{}
	someoneWaits := func(at time.Time, besides map[string]bool) bool {
		for id, wt := range waiters {
			if wt.gone || wt.arrived.After(at) {
				continue
			}
			if !admitted[id] || besides[id] {
				return true
			}
		}
		return false
	}
	seats := max(w.cfg.MaxHolders, 1)
	var (
		out      []noticedHandoff
		prev     = map[string]bool{}
		prevFree = -1
		idleFree int         // free seats nobody waited for when they were freed
		handed   []time.Time // free seats freed while someone waited, oldest first
	)
	for _, v := range decodedStates(versions) {
		st := v.State
		cur := make(map[string]bool, len(st.Holders))
		var fresh []string
		for _, h := range st.Holders {
			cur[h.HolderID] = true
			if !prev[h.HolderID] {
				fresh = append(fresh, h.HolderID)
			}
		}
		free := max(seats-len(st.Holders)-len(st.Reservations), 0)
		if prevFree < 0 {
			prevFree, idleFree = free+len(fresh), free+len(fresh)
		}
		newly := map[string]bool{}
		for _, id := range fresh {
			newly[id] = true
		}
		if freed := free - prevFree + len(fresh); freed > 0 {
			if someoneWaits(v.Time, newly) {
				for range freed {
					handed = append(handed, v.Time)
				}
			} else {
				idleFree += freed
			}
		}
		sort.Slice(fresh, func(a, b int) bool { return noticed[fresh[a]].Before(noticed[fresh[b]]) })
		for _, id := range fresh {
			admitted[id] = true
			switch {
			case len(handed) > 0:
				f := handed[0]
				handed = handed[1:]
				if v.Time.Before(from) || v.Time.After(to) {
					continue
				}
				out = append(out, noticedHandoff{holderID: id, freedAt: f, gap: noticedBy(noticed, id, v.Time).Sub(f)})
			case idleFree > 0:
				idleFree--
			}
		}
		if !someoneWaits(v.Time, nil) {
			idleFree += len(handed)
			handed = nil
		}
		prev, prevFree = cur, free
	}
	return out
}

// noticedAt maps each admitted job's holderId to the moment its acquire
// returned admitted.
func noticedAt(jobs []*simJob) map[string]time.Time {
	m := make(map[string]time.Time, len(jobs))
	for _, j := range jobs {
		if !j.admitted.IsZero() {
			m[j.holderID] = j.admitted
		}
	}
	return m
}

// noticedBy is when the job id knew of an admission committed at at: its
// acquire's return, or at itself when that is not later.
func noticedBy(noticed map[string]time.Time, id string, at time.Time) time.Time {
	if n, ok := noticed[id]; ok && n.After(at) {
		return n
	}
	return at
}
