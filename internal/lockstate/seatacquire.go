package lockstate

import (
	"fmt"
	"time"
)

// checkSeatRequest validates an acquire's labels and priority before
// anything is written and returns the normalized label set.
func checkSeatRequest(cfg Config, req AcquireRequest, lock string) ([]string, error) {
	labels, err := NormalizeLabels(req.Labels)
	if err != nil {
		return nil, newError(CodeOf(err), fmt.Sprintf("acquire %s: %v", lock, err))
	}
	if err := CheckLabels(cfg, labels); err != nil {
		return nil, newError(CodeOf(err), fmt.Sprintf("acquire %s: %v", lock, err))
	}
	if req.Priority < 0 || req.Priority > MaxPriority {
		return nil, newError(CodeInvalidSeatRequest, fmt.Sprintf("acquire %s: priority %d is outside 0..%d", lock, req.Priority, MaxPriority))
	}
	limit := cfg.Priority.Max
	if req.Priority > limit {
		return nil, newError(CodePriorityNotAllowed, fmt.Sprintf("acquire %s: priority %d is above %d, the lock config's priority max", lock, req.Priority, limit))
	}
	return labels, nil
}

// admitBySeat is Acquire's steps 9-11 under the issue-25 rules (planSeats):
// the caller's entry at qi is admitted when the plan gives it a seat (or
// reclaims its quarantine), with its seat recorded on the holder and in
// the seat's affinity record. Every earlier waiter left waiting that could
// have used the seat taken is overtaken once; planSeats guarantees each was
// below cfg.MaxOvertakes.
func admitBySeat(s, work *State, cfg Config, req AcquireRequest, qi int, inserted, changed bool, dec AcquireDecision, now time.Time) (*State, AcquireDecision, error) {
	plan := planSeats(work, cfg)
	if (plan.admit[qi] || plan.reclaim[qi]) && !inserted {
		entry := work.Queue[qi]
		holder := Holder{Entry: req.Identity.entry(work.SchemaVersion, now), AcquiredAt: FormatTime(now), ExpiresAt: FormatTime(now.Add(req.Lease))}
		holder.Labels, holder.Priority = entry.Labels, entry.Priority
		if work.FencingToken >= MaxFencingToken {
			return nil, AcquireDecision{}, newError(CodeInvalidFencingToken, fmt.Sprintf(
				"acquire %s: the fencing counter is exhausted at %d", work.Lock, work.FencingToken))
		}
		work.FencingToken++
		holder.FencingToken = work.FencingToken
		dec.FencingToken = holder.FencingToken
		if plan.reclaim[qi] {
			holder.Seat = plan.reclaimSeat[qi]
			if i := newOccupancy(work, newSerialKeys(work, cfg)).quarantine(entry); i >= 0 {
				consumed := work.Reservations[i]
				dec.ConsumedQuarantine, dec.QuarantineRecovered = &consumed, true
				work.Reservations = append(work.Reservations[:i:i], work.Reservations[i+1:]...)
			}
		} else {
			holder.Seat = plan.seat[qi]
			for i := range qi {
				if !plan.admit[i] && !plan.reclaim[i] && plan.usable(work.Queue[i], holder.Seat) {
					work.Queue[i].Overtakes++
				}
			}
		}
		if holder.Seat != "" {
			recordSeatUse(work, cfg, holder.Seat, AffinityKey(holder.Entry, MachineSerialization(work, cfg)), holder.AcquiredAt)
		}
		work.Queue = append(work.Queue[:qi:qi], work.Queue[qi+1:]...)
		work.Holders = append(work.Holders, holder)
		out, err := finish(work, now)
		if err != nil {
			return nil, AcquireDecision{}, err
		}
		dec.Outcome, dec.Changed, dec.Seat = OutcomeAdmitted, true, holder.Seat
		return out, dec, nil
	}
	dec.Outcome, dec.Position, dec.Rank, dec.Inserted = OutcomeQueued, qi+1, plan.rank[qi], inserted
	if !changed {
		return s.Clone(), dec, nil
	}
	out, err := finish(work, now)
	if err != nil {
		return nil, AcquireDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}
