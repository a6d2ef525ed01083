package acquire

import "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"

// fencingToken returns the fencing token of this run's admission (the
// decision that admitted it, or that found it already holding), 0 below
// schema 6.
//
// TODO(schema6): once lockstate.FencingToken(s, holderID) lands, prefer it
// for the holding read back from state; AcquireDecision.FencingToken is
// already what the schema-6 transition reports.
func fencingToken(dec lockstate.AcquireDecision) int64 {
	return dec.FencingToken
}

// admissibleRank returns how many queued requests would be admitted before
// holderID (0 = next), or -1 when it is not queued. Without runner
// serialization that is the queue index; with it, only the first entry of
// each runner can be admitted, so the rank counts the distinct runners
// queued ahead of the caller's runner (other than its own).
//
// TODO(schema6): switch to lockstate.AdmissibleRank(s, cfg, holderID).
func admissibleRank(s *lockstate.State, cfg lockstate.Config, holderID string) int {
	pos := lockstate.QueuePosition(s, holderID)
	if pos == 0 {
		return -1
	}
	if !lockstate.EffectiveRunnerSerialization(s, cfg) {
		return pos - 1
	}
	mine := s.Queue[pos-1].RunnerID
	seen := map[string]bool{}
	rank := 0
	for _, e := range s.Queue[:pos-1] {
		if e.RunnerID == mine {
			rank++
			continue
		}
		if !seen[e.RunnerID] {
			seen[e.RunnerID] = true
			rank++
		}
	}
	return rank
}
