package lockstate

import (
	"fmt"
	"time"
)

// HandoffLease is the lease (the reaper's hint) of a holder admitted by a
// direct handoff: the waiter's own lease-minutes is not recorded in its queue
// entry, so the handoff uses the acquire action's default, 240 minutes.
const HandoffLease = 240 * time.Minute

// HandoffMaxSchema is the highest schema at which the release action hands
// its seat directly to the next waiters (HandoffAllowed). Above it a seat's
// owner may hold an activated license (schema 4, resource lifecycle): a
// waiter that died while queued and was handed a seat cannot be told from a
// holder that died after activating, so the reaper would quarantine the
// seat until a same-runner reclaim, an operator or the 240-minute grace. At
// schema <= 3 the reaper drops a proven-dead holder at once, so a dead
// waiter handed a seat costs one reaper period (docs/performance.md).
const HandoffMaxSchema = 3

// HandoffAllowed reports whether the release action hands seats off
// directly on s: schema <= HandoffMaxSchema and no active incident.
func HandoffAllowed(s *State) bool {
	return s != nil && s.SchemaVersion <= HandoffMaxSchema && !(s.SchemaVersion >= 5 && s.ActiveIncident != nil)
}

// migrationPending reports a config that asks for a schema above s's: an
// upgrade is pending, and admission is paused until it is written.
func migrationPending(s *State, cfg Config) bool {
	return TargetSchema(cfg) > s.SchemaVersion
}

// HandoffDecision describes what Handoff did.
type HandoffDecision struct {
	// Admitted lists the holderIds admitted, in admission order.
	Admitted []string
	// FencingTokens are their tokens (schema >= 6), parallel to Admitted.
	FencingTokens []int64
	// Changed is true iff the returned state must be written.
	Changed bool
}

// Handoff is direct handoff: it admits queued waiters into the free seats of
// s by the same rule as Acquire's admission, so the seat a release (or any
// other write) freed is taken in that same write and the waiters' own
// admission writes disappear. A waiter learns of its admission on its next
// poll, as the already-holder path of Acquire.
//
// One waiter is admitted at a time, each on a fresh scanQueue of the state
// with the previous admissions applied, exactly as a sequence of Acquire
// admissions would: the admitted waiter is the lowest-ranked admissible
// entry (rank 0; FIFO, runner serialization and the schema-6 overtaking
// barrier included); every earlier blocked waiter it passes is overtaken
// once (schema 6); the fencing counter issues it the next token (schema
// 6). Same-runner quarantine reclaims are left to the reclaiming job itself
// (it must consume its runner's quarantine in its own admission). Nothing
// is admitted while an incident is active (schema 5), while cfg asks for a
// schema upgrade that has not been written (admission is paused until the
// lock drains and the upgrade lands; Cleanup writes it in the same state
// when the release drained the lock), or
// when no seat is free (a cooldown or quarantine occupies its seat). The holder's acquiredAt is
// now and its expiresAt now + HandoffLease; its entry is the queue entry's
// (queuedAt and jobId kept). Expired cooldowns are pruned first, as
// Acquire does (a handoff that admits nobody changes nothing). s is never
// modified; Changed=false returns a copy of s.
func Handoff(s *State, cfg Config, now time.Time) (*State, HandoffDecision, error) {
	if s == nil {
		return nil, HandoffDecision{}, newError(CodeInvalidState, "hand off lock: state is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, HandoffDecision{}, err
	}
	if err := validateState(s, ""); err != nil {
		return nil, HandoffDecision{}, err
	}
	var dec HandoffDecision
	if s.SchemaVersion >= 5 && s.ActiveIncident != nil || migrationPending(s, cfg) {
		return s.Clone(), dec, nil
	}
	work := s.Clone()
	pruneExpired(work, now)
	serialized := EffectiveRunnerSerialization(work, cfg)
	work.Queue = dedupeQueue(work.Queue)
	for FreeSlots(work, cfg) > 0 {
		sc := scanQueue(work, cfg, serialized)
		qi := -1
		for i := range work.Queue {
			if sc.rank[i] == 0 {
				qi = i
				break
			}
		}
		if qi < 0 {
			break
		}
		e := work.Queue[qi]
		e.Overtakes = 0
		e.PendingRunnerID = "" // a queue entry's note for an upgrade; never on a holder
		holder := Holder{Entry: e, AcquiredAt: FormatTime(now), ExpiresAt: FormatTime(now.Add(HandoffLease))}
		if work.SchemaVersion >= FencedSchemaVersion {
			if work.FencingToken >= MaxFencingToken {
				return nil, HandoffDecision{}, newError(CodeInvalidFencingToken, fmt.Sprintf(
					"hand off %s: the fencing counter is exhausted at %d", work.Lock, work.FencingToken))
			}
			work.FencingToken++
			holder.FencingToken = work.FencingToken
			for i := range qi {
				if sc.blocked(i) {
					work.Queue[i].Overtakes++
				}
			}
		}
		work.Queue = append(work.Queue[:qi:qi], work.Queue[qi+1:]...)
		work.Holders = append(work.Holders, holder)
		dec.Admitted = append(dec.Admitted, holder.HolderID)
		dec.FencingTokens = append(dec.FencingTokens, holder.FencingToken)
	}
	if len(dec.Admitted) == 0 {
		return s.Clone(), dec, nil
	}
	out, err := finish(work, now)
	if err != nil {
		return nil, HandoffDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}
