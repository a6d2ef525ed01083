package acquire

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"

// fencingToken returns the fencing token of this run's admission (the
// decision that admitted it, or that found it already holding), 0 below
// schema 6.
func fencingToken(dec lockstate.AcquireDecision) int64 {
	return dec.FencingToken
}

// admissibleRank returns how many queued requests would be admitted before
// holderID (0 = next), or -1 when it cannot be admitted next at all (not
// queued, its runner busy, behind an overtaking barrier, or an incident):
// such a waiter polls at the base interval, and a cooldown on its runner
// still wakes it early.
func admissibleRank(s *lockstate.State, cfg lockstate.Config, holderID string) int {
	return lockstate.AdmissibleRank(s, cfg, holderID)
}
