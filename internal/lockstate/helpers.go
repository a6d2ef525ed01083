package lockstate

import "time"

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
	return cfg.MaxHolders - len(s.Holders) - len(s.Reservations)
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
