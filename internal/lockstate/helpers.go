package lockstate

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// EffectiveRunnerSerialization reports whether admission is serialized per
// runner: the config flag, or a state that already reached schema 3 (a config
// outage never weakens protections already in state).
func EffectiveRunnerSerialization(s *State, cfg Config) bool {
	return cfg.RunnerSerialization || s.SchemaVersion >= 3
}

// FreeSlots returns maxHolders − holders − reservations. Cooldowns and
// quarantines both consume a slot. It counts reservations as stored; call it
// on a state returned by a transition (which prunes expired cooldowns) or on
// PruneExpiredCooldowns's result. It is negative when maxHolders was lowered
// below the current occupancy.
func FreeSlots(s *State, cfg Config) int {
	free := cfg.MaxHolders - len(s.Holders) - len(s.Reservations)
	if plant.Enabled(plant.FreeSlotOffByOne) { // planted bug (tests only)
		free++
	}
	return free
}

// QueuePosition returns the 1-based position of holderID's first queue
// entry, or 0 when it is not queued.
func QueuePosition(s *State, holderID string) int {
	for i, e := range s.Queue {
		if e.HolderID == holderID {
			return i + 1
		}
	}
	return 0
}

// HolderIndex returns the index of holderID in s.Holders, or -1.
func HolderIndex(s *State, holderID string) int {
	for i, h := range s.Holders {
		if h.HolderID == holderID {
			return i
		}
	}
	return -1
}

// NextCooldownExpiry returns the earliest cooldown availableAt strictly after
// now. Quarantines and already expired cooldowns never shorten a wait, so
// they are ignored; ok is false when there is no such cooldown.
func NextCooldownExpiry(s *State, now time.Time) (time.Time, bool) {
	var best time.Time
	found := false
	for _, r := range s.Reservations {
		if r.State != ReservationCooldown {
			continue
		}
		t, ok := ParseTime(r.AvailableAt)
		if !ok || !t.After(now) {
			continue
		}
		if !found || t.Before(best) {
			best, found = t, true
		}
	}
	return best, found
}

// PruneExpiredCooldowns returns a copy of s without cooldowns whose
// availableAt <= now, and how many were dropped. s is not modified.
func PruneExpiredCooldowns(s *State, now time.Time) (*State, int) {
	c := s.Clone()
	n := pruneExpired(c, now)
	return c, n
}

// pruneExpired drops expired cooldowns from s in place (the reference
// pruneExpiredCooldowns).
func pruneExpired(s *State, now time.Time) int {
	if len(s.Reservations) == 0 {
		return 0
	}
	now = now.Truncate(time.Millisecond)
	kept := s.Reservations[:0:0]
	for _, r := range s.Reservations {
		if r.State == ReservationCooldown {
			if t, ok := ParseTime(r.AvailableAt); ok && !t.After(now) {
				continue
			}
		}
		kept = append(kept, r)
	}
	n := len(s.Reservations) - len(kept)
	s.Reservations = kept
	return n
}

// finish stamps a changed state and checks it before it leaves the package.
func finish(s *State, now time.Time) (*State, error) {
	s.UpdatedAt = FormatTime(now)
	s.canonicalize()
	if err := validateState(s, ""); err != nil {
		return nil, err
	}
	return s, nil
}

// FencingToken returns the fencing token of holderID's admission, or 0 when
// holderID holds no slot or the state is below schema 6. A step that
// recorded its token at admission can compare it with this value on a fresh
// read: a different (larger) token or 0 means its admission is no longer
// current.
func FencingToken(s *State, holderID string) int64 {
	if i := HolderIndex(s, holderID); i >= 0 {
		return s.Holders[i].FencingToken
	}
	return 0
}

// Overtakes returns how many admissions passed holderID's queue entry while
// it was blocked (schema 6), or 0 when it is not queued or the state is
// below schema 6.
func Overtakes(s *State, holderID string) int {
	if p := QueuePosition(s, holderID); p > 0 {
		return s.Queue[p-1].Overtakes
	}
	return 0
}

// AdmissibleRank returns how many admissible waiters are ahead of
// holderID's queue entry in the admission scan, or -1 when it is not queued
// or cannot be admitted now whatever the number of free seats: an active
// incident (schema 5), its runner holds a slot or a reservation, an earlier
// entry on its runner waits, or (schema 6) it is behind a waiter that has
// been overtaken maxOvertakes times. 0 means its next Acquire admits it as
// soon as one seat is free; in general it is admitted iff rank <
// FreeSlots(s, cfg). A same-runner quarantine reclaim needs no free seat and
// ranks 0.
//
// While an upgrade is pending (Upgrade) admission is paused, so no rank
// admits now; the rank returned is then the one the waiter will have once
// the lock has drained and the upgrade has landed (a reclaim still ranks 0),
// which is what its polling follows.
//
// Like FreeSlots it reads reservations as stored: call it on a state
// returned by a transition or by PruneExpiredCooldowns. AcquireDecision.Rank
// already carries it for a queued caller.
func AdmissibleRank(s *State, cfg Config, holderID string) int {
	qi := QueuePosition(s, holderID) - 1
	if qi < 0 || (s.SchemaVersion >= 5 && s.ActiveIncident != nil) {
		return -1
	}
	up := planUpgrade(s, cfg, "")
	if !up.Pending() && seatMode(s, cfg) {
		p := planSeats(s, cfg)
		if p.reclaim[qi] {
			return 0
		}
		return p.rank[qi]
	}
	sc := scanQueue(s, cfg, s.SchemaVersion >= 3)
	if sc.reclaim[qi] {
		return 0
	}
	if up.Pending() {
		v := upgradeView(s, up)
		return scanQueue(v, cfg, true).rank[QueuePosition(v, holderID)-1]
	}
	return sc.rank[qi]
}
