package machinequeue

import (
	"fmt"
	"time"
)

// Verdict is what the OS layer proved about one recorded process.
type Verdict int

// Verdicts. The zero value is VerdictUnknown, so a process missing from
// the Evidence is never reclaimed.
const (
	// VerdictUnknown: liveness could not be proven either way (no
	// permission, another pid namespace, an unreadable /proc): the entry
	// is kept.
	VerdictUnknown Verdict = iota
	// VerdictAlive: a process with this pid and this start time runs.
	VerdictAlive
	// VerdictDead: no process has this pid, or the pid belongs to a
	// process started at another time, or it has exited (a zombie), or
	// the machine rebooted since.
	VerdictDead
)

// String names v.
func (v Verdict) String() string {
	switch v {
	case VerdictAlive:
		return "alive"
	case VerdictDead:
		return "dead"
	}
	return "unknown"
}

// Evidence maps recorded processes to verdicts. A process it does not
// mention is VerdictUnknown.
type Evidence map[Process]Verdict

// Processes returns every distinct process recorded in s (holders' owners,
// waiters' owners and waiting processes), in the order they appear: what
// the store probes before a transition.
func Processes(s *State) []Process {
	seen := map[Process]bool{}
	var out []Process
	add := func(p Process) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, h := range s.Holders {
		add(h.Owner)
	}
	for _, w := range s.Queue {
		add(w.Owner)
		add(w.Waiter)
	}
	return out
}

// Find returns the holder with holderID (nil if none) and, when it waits,
// its 1-based queue position (0 if it does not wait).
func Find(s *State, holderID string) (*Holder, int) {
	for i := range s.Holders {
		if s.Holders[i].HolderID == holderID {
			h := s.Holders[i]
			return &h, 0
		}
	}
	for i, w := range s.Queue {
		if w.HolderID == holderID {
			return nil, i + 1
		}
	}
	return nil, 0
}

// Reclaimed is one entry removed because Evidence proved a process dead.
type Reclaimed struct {
	HolderID string
	// Holding is true for a holder (its slot was freed), false for a waiter.
	Holding bool
	// Slot is the freed slot of a holder, 0 for a waiter.
	Slot int
	// Dead is the process proven dead.
	Dead Process
}

// Changes is what a transition changed besides the caller's own request:
// entries reclaimed (before the request) and holder ids admitted from the
// queue head (after it), in order.
type Changes struct {
	Reclaimed []Reclaimed
	Admitted  []string
}

// TakeRequest asks for one of Slots slots for HolderID.
type TakeRequest struct {
	HolderID string
	// Slots is K, 1..64.
	Slots int
	// Owner is the process whose life bounds the slot; Waiter the process
	// waiting for it (the caller of the store's Take).
	Owner, Waiter Process
}

// TakeOutcome is the result of one Take.
type TakeOutcome string

// Take outcomes.
const (
	// TakeAdmitted: the caller holds a slot from this write on.
	TakeAdmitted TakeOutcome = "admitted"
	// TakeAlreadyHolder: the caller already held a slot (admitted by an
	// earlier write: its own or a handoff by another writer).
	TakeAlreadyHolder TakeOutcome = "already-holder"
	// TakeQueued: the caller waits at Position.
	TakeQueued TakeOutcome = "queued"
)

// TakeDecision describes what Take decided.
type TakeDecision struct {
	Outcome TakeOutcome
	// Changed is true iff the returned state must be written.
	Changed bool
	// Position is the 1-based queue position when queued, else 0.
	Position int
	// Holder is the caller's holder entry when admitted or already a
	// holder (slot, queuedAt, admittedAt).
	Holder *Holder
	Changes
}

// Take is one poll of a job that wants a slot: reclaim what Evidence proves
// dead, then join the queue (or refresh the caller's entry, keeping its
// place), then admit from the head while a slot is free. The caller is
// admitted only when it reaches the head: strict FIFO.
//
// Refused (nothing to write): a malformed request (CodeInvalidRequest), a
// caller whose owner or waiter is proven dead (CodeOwnerDead), the holder id
// queued or holding for another owner (CodeHolderConflict), a full queue
// (CodeQueueFull), an invalid state. s is never modified.
func Take(s *State, req TakeRequest, ev Evidence, now time.Time) (*State, TakeDecision, error) {
	if p := holderIDProblem(req.HolderID); p != "" {
		return nil, TakeDecision{}, Errorf(CodeInvalidRequest, "take a machine slot: holder id %s", p)
	}
	if req.Slots < MinSlots || req.Slots > MaxSlots {
		return nil, TakeDecision{}, Errorf(CodeInvalidRequest, "take a machine slot: machine-slots %d is outside %d..%d", req.Slots, MinSlots, MaxSlots)
	}
	if p := req.Owner.problem(); p != "" {
		return nil, TakeDecision{}, Errorf(CodeInvalidRequest, "take a machine slot: owner process %s", p)
	}
	if p := req.Waiter.problem(); p != "" {
		return nil, TakeDecision{}, Errorf(CodeInvalidRequest, "take a machine slot: waiting process %s", p)
	}
	if ev[req.Owner] == VerdictDead || ev[req.Waiter] == VerdictDead {
		return nil, TakeDecision{}, Errorf(CodeOwnerDead, "take a machine slot for %q: its owner %s or waiting process %s has exited", clip(req.HolderID), req.Owner, req.Waiter)
	}
	if err := Validate(s); err != nil {
		return nil, TakeDecision{}, err
	}
	work := s.Clone()
	dec := TakeDecision{}
	changed := reclaim(work, ev, &dec.Changes)
	if h, _ := Find(work, req.HolderID); h != nil {
		if h.Owner != req.Owner {
			return nil, TakeDecision{}, conflict("take a machine slot", req.HolderID, "holds slot "+fmt.Sprint(h.Slot), h.Owner, req.Owner)
		}
		changed = settle(work, now, &dec.Changes) || changed
		dec.Outcome, dec.Holder, dec.Changed = TakeAlreadyHolder, h, changed
		return work, dec, nil
	}
	if _, pos := Find(work, req.HolderID); pos > 0 {
		w := &work.Queue[pos-1]
		if w.Owner != req.Owner {
			return nil, TakeDecision{}, conflict("take a machine slot", req.HolderID, "waits in the queue", w.Owner, req.Owner)
		}
		if w.Waiter != req.Waiter || w.Slots != req.Slots {
			w.Waiter, w.Slots = req.Waiter, req.Slots
			changed = true
		}
	} else {
		if len(work.Holders)+len(work.Queue) >= MaxEntries {
			return nil, TakeDecision{}, Errorf(CodeQueueFull, "take a machine slot for %q: the machine queue already has %d entries; look for a runaway workflow on this machine", clip(req.HolderID), MaxEntries)
		}
		work.Queue = append(work.Queue, Waiter{HolderID: req.HolderID, Slots: req.Slots, Owner: req.Owner, Waiter: req.Waiter, QueuedAt: FormatTime(now)})
		changed = true
	}
	changed = settle(work, now, &dec.Changes) || changed
	dec.Changed = changed
	if h, pos := Find(work, req.HolderID); h != nil {
		dec.Outcome, dec.Holder = TakeAdmitted, h
	} else {
		dec.Outcome, dec.Position = TakeQueued, pos
	}
	return work, dec, nil
}

// ReleaseRequest removes HolderID's slot or queue entry, if Owner owns it.
type ReleaseRequest struct {
	HolderID string
	Owner    Process
}

// ReleaseOutcome is the result of one Release.
type ReleaseOutcome string

// Release outcomes.
const (
	// ReleaseFreed: the caller's slot was freed.
	ReleaseFreed ReleaseOutcome = "released"
	// ReleaseDequeued: the caller's queue entry was removed.
	ReleaseDequeued ReleaseOutcome = "dequeued"
	// ReleaseNotFound: the holder id neither holds nor waits (already
	// released, or reclaimed).
	ReleaseNotFound ReleaseOutcome = "not-found"
)

// ReleaseDecision describes what Release decided.
type ReleaseDecision struct {
	Outcome ReleaseOutcome
	// Changed is true iff the returned state must be written.
	Changed bool
	// Holder is the removed holder when ReleaseFreed.
	Holder *Holder
	Changes
}

// Release is a job leaving: reclaim what Evidence proves dead, remove the
// caller's holder or queue entry, then admit from the head while a slot is
// free (the freed slot is handed to the next waiter in the same write).
// Another owner's entry of the same holder id is refused
// (CodeHolderConflict) and nothing is written. s is never modified.
func Release(s *State, req ReleaseRequest, ev Evidence, now time.Time) (*State, ReleaseDecision, error) {
	if p := holderIDProblem(req.HolderID); p != "" {
		return nil, ReleaseDecision{}, Errorf(CodeInvalidRequest, "release a machine slot: holder id %s", p)
	}
	if p := req.Owner.problem(); p != "" {
		return nil, ReleaseDecision{}, Errorf(CodeInvalidRequest, "release a machine slot: owner process %s", p)
	}
	if err := Validate(s); err != nil {
		return nil, ReleaseDecision{}, err
	}
	work := s.Clone()
	dec := ReleaseDecision{Outcome: ReleaseNotFound}
	changed := reclaim(work, ev, &dec.Changes)
	for i, h := range work.Holders {
		if h.HolderID != req.HolderID {
			continue
		}
		if h.Owner != req.Owner {
			return nil, ReleaseDecision{}, conflict("release a machine slot", req.HolderID, fmt.Sprintf("holds slot %d", h.Slot), h.Owner, req.Owner)
		}
		work.Holders = append(work.Holders[:i:i], work.Holders[i+1:]...)
		dec.Outcome, dec.Holder, changed = ReleaseFreed, &h, true
		break
	}
	for i, w := range work.Queue {
		if w.HolderID != req.HolderID {
			continue
		}
		if w.Owner != req.Owner {
			return nil, ReleaseDecision{}, conflict("release a machine slot", req.HolderID, "waits in the queue", w.Owner, req.Owner)
		}
		work.Queue = append(work.Queue[:i:i], work.Queue[i+1:]...)
		dec.Outcome, changed = ReleaseDequeued, true
		break
	}
	dec.Changed = settle(work, now, &dec.Changes) || changed
	return work, dec, nil
}

// ReclaimDecision describes what Reclaim decided.
type ReclaimDecision struct {
	// Changed is true iff the returned state must be written.
	Changed bool
	Changes
}

// Reclaim removes every entry whose owner (or, for a waiter, whose waiting
// process) Evidence proves dead, then admits from the head while a slot is
// free. A waiting poll calls it when it found a dead process, so a crashed
// holder's slot is handed on without waiting for another job to arrive.
// s is never modified.
func Reclaim(s *State, ev Evidence, now time.Time) (*State, ReclaimDecision, error) {
	if err := Validate(s); err != nil {
		return nil, ReclaimDecision{}, err
	}
	work := s.Clone()
	dec := ReclaimDecision{}
	changed := reclaim(work, ev, &dec.Changes)
	dec.Changed = settle(work, now, &dec.Changes) || changed
	return work, dec, nil
}

// NeedsWrite reports whether a Reclaim of s with ev would change anything:
// the read-only check of a waiting poll, which takes the exclusive lock only
// when it is true.
func NeedsWrite(s *State, ev Evidence) bool {
	for _, h := range s.Holders {
		if ev[h.Owner] == VerdictDead {
			return true
		}
	}
	for _, w := range s.Queue {
		if ev[w.Owner] == VerdictDead || ev[w.Waiter] == VerdictDead {
			return true
		}
	}
	return len(s.Queue) > 0 && admissible(s, s.Queue[0])
}

// reclaim removes the entries Evidence proves dead from work.
func reclaim(work *State, ev Evidence, c *Changes) bool {
	changed := false
	holders := work.Holders[:0:0]
	for _, h := range work.Holders {
		if ev[h.Owner] == VerdictDead {
			c.Reclaimed = append(c.Reclaimed, Reclaimed{HolderID: h.HolderID, Holding: true, Slot: h.Slot, Dead: h.Owner})
			changed = true
			continue
		}
		holders = append(holders, h)
	}
	queue := work.Queue[:0:0]
	for _, w := range work.Queue {
		dead := w.Owner
		if ev[dead] != VerdictDead {
			dead = w.Waiter
		}
		if ev[dead] == VerdictDead {
			c.Reclaimed = append(c.Reclaimed, Reclaimed{HolderID: w.HolderID, Dead: dead})
			changed = true
			continue
		}
		queue = append(queue, w)
	}
	work.Holders, work.Queue = holders, queue
	return changed
}

// admissible reports whether w could be admitted next to s's holders:
// holders+1 <= min(w.Slots, every holder's Slots).
func admissible(s *State, w Waiter) bool {
	limit := w.Slots
	for _, h := range s.Holders {
		limit = min(limit, h.Slots)
	}
	return len(s.Holders)+1 <= limit
}

// settle admits queue heads while they are admissible, each into the
// lowest free slot number.
func settle(work *State, now time.Time, c *Changes) bool {
	changed := false
	for len(work.Queue) > 0 && admissible(work, work.Queue[0]) {
		w := work.Queue[0]
		used := map[int]bool{}
		for _, h := range work.Holders {
			used[h.Slot] = true
		}
		slot := 1
		for used[slot] {
			slot++
		}
		admitted := FormatTime(now)
		if a, ok := ParseTime(admitted); ok {
			if q, ok := ParseTime(w.QueuedAt); ok && a.Before(q) {
				// A clock that stepped back since the waiter joined: never
				// record an admission before the queueing.
				admitted = w.QueuedAt
			}
		}
		work.Holders = append(work.Holders, Holder{HolderID: w.HolderID, Slot: slot, Slots: w.Slots, Owner: w.Owner, QueuedAt: w.QueuedAt, AdmittedAt: admitted})
		work.Queue = work.Queue[1:]
		c.Admitted = append(c.Admitted, w.HolderID)
		changed = true
	}
	if len(work.Queue) == 0 {
		work.Queue = []Waiter{}
	}
	return changed
}

func conflict(verb, holderID, what string, stored, caller Process) error {
	return Errorf(CodeHolderConflict, "%s for %q: that holder id already %s for owner %s, and this request is from owner %s; two jobs cannot share one holder id, and a job's owner process must not change while it holds or waits", verb, clip(holderID), what, stored, caller)
}
