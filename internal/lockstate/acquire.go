package lockstate

import (
	"fmt"
	"time"
)

// AcquireOutcome is the result of one Acquire step.
type AcquireOutcome string

// Acquire outcomes.
const (
	// OutcomeAdmitted means the caller became a holder in the returned state.
	OutcomeAdmitted AcquireOutcome = "admitted"
	// OutcomeAlreadyHolder means the caller already holds a slot.
	OutcomeAlreadyHolder AcquireOutcome = "already-holder"
	// OutcomeQueued means the caller waits in the queue at Position.
	OutcomeQueued AcquireOutcome = "queued"
	// OutcomeAccountBlocked means a schema-5 incident blocks all admission.
	// Nothing is written; if Position > 0 the caller must remove its own queue
	// entry with Cleanup{QueueOnly: true}.
	OutcomeAccountBlocked AcquireOutcome = "account-blocked"
)

// AcquireRequest is one acquire poll by Identity. Lease sets the holder's
// expiresAt = acquiredAt + Lease on admission.
type AcquireRequest struct {
	Identity Identity
	Lease    time.Duration
	// Arrival, when set, is the caller's arrival snapshot: the holderIds
	// queued in the first state this acquire invocation read. A new entry
	// is then inserted by arrival (see Acquire) instead of appended, so a
	// compare-and-swap loss, or a join spread out to avoid one, never costs
	// queue position. Nil appends (the reference behaviour).
	Arrival *Arrival
	// Labels (issue 25) is the waiter's seat-label set: it is admitted only
	// to a seat carrying all of them. Empty means any seat. A set no
	// configured seat carries is refused before joining (CodeNoMatchingSeat).
	Labels []string
	// Priority (issue 25, 0..MaxPriority) is the waiter's priority class.
	// Acquire refuses a class above the config's priority max
	// (CodePriorityNotAllowed); the caller checks the per-caller privilege
	// (CheckPriority) before calling.
	Priority int
}

// Arrival is an acquire invocation's arrival snapshot (AcquireRequest).
type Arrival struct {
	// Queued holds the holderIds queued when the caller arrived.
	Queued map[string]bool
}

// NewArrival records the arrival snapshot of s.
func NewArrival(s *State) *Arrival {
	a := &Arrival{Queued: map[string]bool{}}
	if s != nil {
		for _, e := range s.Queue {
			a.Queued[e.HolderID] = true
		}
	}
	return a
}

// MaxQueueEntries bounds the queue: an acquire that would add an entry to a
// queue this long is refused (CodeQueueFull) and writes nothing. At about
// 400 bytes per entry it keeps the state document near 400 KB, well inside
// the 1 MB the Contents API returns inline (larger files need a second,
// raw read on every changed poll; GitHub serves none over 100 MB), and it
// is far beyond what one writer App can drain (docs/performance.md: about
// 166 cycles per hour within the 500 content writes per hour).
const MaxQueueEntries = 1000

// insertPosition is where a new entry e joins under arrival insertion:
// after every entry that was already queued when the caller arrived (its
// own read, so no other writer's clock is trusted for those), then by
// arrival time among the entries that joined since: past each one whose
// queuedAt (its acquire's start) is not after e's. A skewed clock can
// therefore only reorder e among entries that joined while e was joining.
// With no earlier entry left it joins at the head.
func insertPosition(q []Entry, a *Arrival, e Entry) int {
	if a == nil {
		return len(q)
	}
	pos := 0
	for i, x := range q {
		if a.Queued[x.HolderID] {
			pos = i + 1
		}
	}
	mine, ok := ParseTime(e.QueuedAt)
	if !ok {
		return len(q)
	}
	for pos < len(q) {
		t, ok := ParseTime(q[pos].QueuedAt)
		if a.Queued[q[pos].HolderID] || (ok && t.After(mine)) {
			break
		}
		pos++
	}
	return pos
}

// AcquireDecision describes what Acquire decided.
type AcquireDecision struct {
	Outcome AcquireOutcome
	// Changed is true iff the returned state must be written. When false the
	// returned state equals the input: a waiting poll writes nothing.
	Changed bool
	// Position is the 1-based queue position when queued (or when blocked
	// while queued), 0 otherwise.
	Position int
	// QuarantineRecovered reports a same-runner quarantine reclaim.
	QuarantineRecovered bool
	// ConsumedQuarantine is the quarantine removed by the reclaim; pass it as
	// CleanupRequest.RestoreQuarantine if the admission is retracted.
	ConsumedQuarantine *Reservation
	// Incident is a copy of the active incident when account-blocked.
	Incident *Incident
	// MigratedTo is the schema reached by an upgrade written in this call
	// (Upgrade), or 0.
	MigratedTo int
	// Upgrade, when set, is the pending upgrade that pauses admission: the
	// config asks for a schema the lock has not reached and something is
	// left to drain (Upgrade.Paused). The caller waits in the queue.
	Upgrade *Upgrade
	// FencingToken (schema >= 6) is the caller's token when admitted or
	// already a holder: admitted gets a fresh token larger than every token
	// issued before, already-holder gets its stored token. 0 below schema 6
	// and for every other outcome.
	FencingToken int64
	// Rank is, when queued, AdmissibleRank of the caller in the state this
	// call evaluated (expired cooldowns pruned): how many admissible waiters
	// are ahead of it, or -1 when it is blocked. 0 for other outcomes.
	Rank int
	// Inserted is true when the caller's new entry was inserted by arrival
	// ahead of later arrivals (AcquireRequest.Arrival): it is queued in
	// this write even when it could be admitted, and its next poll admits
	// it.
	Inserted bool
	// Seat (issue 25) is the named seat of the caller when admitted or
	// already a holder; "" with anonymous seats.
	Seat string
}

// Acquire is the state logic of one iteration of the reference acquire loop
// (spec §3.5 steps 4-11): runner-id requirement and migrations, incident
// blocking, cooldown pruning, the already-holder path (run-attempt fence and
// jobId backfill), queue dedupe, refreshing or appending the caller's entry,
// and admission. Joining the queue and admission land in one returned state
// when a slot is free.
//
// Safety: admission never makes holders exceed maxHolders − reservations
// (a same-runner quarantine reclaim swaps a reservation for a holder); under
// runner serialization one runner holds at most one slot or reservation and
// admissions follow each runner's FIFO order. Under machine serialization
// (cfg.SerializeBy "machine", or a state recording a machineId; see
// serialKeys) the same holds per machine as well: the request must carry
// its MachineID (CodeMachineIDUnavailable otherwise, nothing written), and
// a sibling agent of a quarantine's machine may reclaim it. s is never
// modified.
//
// Schema 6 (see scanQueue and docs/state-schema.md): every admission,
// including a reclaim, increments State.FencingToken and stamps the new
// holder with it (AcquireDecision.FencingToken). An admission by the scan
// increments the overtakes of every earlier waiter that could not have been
// admitted instead (blocked on its runner); a waiter whose overtakes reached
// cfg.MaxOvertakes stops the scan, so nobody behind it is admitted until it
// is admitted or leaves. Both changes land in the admission's own write: the
// caller is the only entry admitted, and a waiting poll still writes nothing.
//
// Upgrades (Upgrade, docs/state-schema.md §10): when the config asks for a
// schema the state has not reached, the upgrade is written in this call if
// nothing is left to drain (a brand-new lock included), straight to the
// target schema and with the queue carried across; otherwise admission
// pauses (AcquireDecision.Upgrade): the caller joins or keeps its place and
// waits, and only a same-runner quarantine reclaim is admitted.
//
// Divergences from the reference, by design: a poll whose only effect would
// be pruning expired cooldowns or collapsing duplicate schema-2 queue entries
// is not a write (Changed=false); expired cooldowns are pruned before the
// drain check; a pending upgrade pauses admission instead of failing with
// drain-required, and a drained lock climbs to the target schema in one
// write instead of one schema per write (migration-step-required).
func Acquire(s *State, cfg Config, req AcquireRequest, now time.Time) (*State, AcquireDecision, error) {
	id := req.Identity
	if s == nil {
		return nil, AcquireDecision{}, newError(CodeInvalidState, "acquire lock: state is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, AcquireDecision{}, err
	}
	if req.Lease <= 0 {
		return nil, AcquireDecision{}, newError(CodeInvalidLease, fmt.Sprintf("acquire %s: lease %s must be positive", s.Lock, req.Lease))
	}
	if err := id.validate("acquire " + s.Lock); err != nil {
		return nil, AcquireDecision{}, err
	}
	if err := validateState(s, ""); err != nil {
		return nil, AcquireDecision{}, err
	}
	labels, err := checkSeatRequest(cfg, req, s.Lock)
	if err != nil {
		return nil, AcquireDecision{}, err
	}
	if err := checkMachineRequest(cfg, id, s.Lock); err != nil {
		return nil, AcquireDecision{}, err
	}
	work := s.Clone()
	runner := jsTrim(id.RunnerID)
	if EffectiveRunnerSerialization(work, cfg) && runner == "" {
		return nil, AcquireDecision{}, newError(CodeRunnerIDRequired, fmt.Sprintf(
			"acquire %s: runner-id is required while runner serialization is active", s.Lock))
	}
	pruneExpired(work, now)
	up := planUpgrade(work, cfg, id.HolderID)
	dec := AcquireDecision{}
	if up.Ready() {
		applyUpgrade(work, up, id.HolderID, runner)
		dec.MigratedTo = up.To
	}
	if !up.Pending() && work.SchemaVersion < 3 {
		// No upgrade pending (the flag was turned off again): a recorded
		// runner id has no use, and the next write drops it.
		for i := range work.Queue {
			work.Queue[i].PendingRunnerID = ""
		}
	}
	paused := up.Paused()
	if paused {
		u := up
		dec.Upgrade = &u
	}
	serialized := work.SchemaVersion >= 3

	// Step 5: an active incident blocks; never enqueue, never write here.
	if work.SchemaVersion >= 5 && work.ActiveIncident != nil {
		inc := *work.ActiveIncident
		return s.Clone(), AcquireDecision{Outcome: OutcomeAccountBlocked, Incident: &inc, Position: QueuePosition(s, id.HolderID)}, nil
	}

	// Step 7: already a holder.
	if hi := HolderIndex(work, id.HolderID); hi >= 0 {
		return acquireAsHolder(s, work, hi, id, serialized, now)
	}

	// Step 8: dedupe the queue, then refresh or append the caller's entry.
	work.Queue = dedupeQueue(work.Queue)
	changed := dec.MigratedTo != 0
	inserted := false
	want := id.entry(work.SchemaVersion, now)
	if work.SchemaVersion >= FencedSchemaVersion {
		want.Labels, want.Priority = JoinLabels(labels), req.Priority
	}
	if paused && work.SchemaVersion < 3 {
		// Record the runner id the entry takes when the upgrade to runner
		// serialization lands, so the job keeps its place across it.
		want.PendingRunnerID = runner
	}
	qi := QueuePosition(work, id.HolderID) - 1
	if qi >= 0 {
		refreshed, err := refreshEntry(work.Queue[qi], want, id, serialized, work.Lock)
		if err != nil {
			return nil, AcquireDecision{}, err
		}
		if work.SchemaVersion >= FencedSchemaVersion {
			// The labels and class are the current request's: an entry
			// carried across the upgrade to schema 6 gains them here.
			refreshed.Labels, refreshed.Priority = want.Labels, want.Priority
		}
		if refreshed != work.Queue[qi] {
			work.Queue[qi] = refreshed
			changed = true
		}
	} else {
		if len(work.Queue) >= MaxQueueEntries {
			return nil, AcquireDecision{}, newError(CodeQueueFull, fmt.Sprintf(
				"acquire %s: the queue already holds %d entries, the most one lock supports (about %d KB of state); wait for it to drain or shard the lock (docs/performance.md)",
				s.Lock, len(work.Queue), len(work.Queue)*400/1000))
		}
		qi = insertPosition(work.Queue, req.Arrival, want)
		inserted = qi < len(work.Queue)
		work.Queue = append(work.Queue[:qi:qi], append([]Entry{want}, work.Queue[qi:]...)...)
		changed = true
	}

	// Steps 9-10: admission.
	if seatMode(work, cfg) {
		return admitBySeat(s, work, cfg, req, qi, inserted, changed, dec, now)
	}
	free := FreeSlots(work, cfg)
	sc := scanQueue(work, cfg, serialized)
	reclaim := -1
	if sc.reclaim[qi] {
		reclaim = newOccupancy(work, newSerialKeys(work, cfg)).quarantine(work.Queue[qi])
	}
	// While an upgrade drains, admission pauses: only a same-runner
	// reclaim, which takes no free seat and ends a quarantine that may be
	// what blocks the drain, is admitted.
	eligible := reclaim >= 0 || (!paused && sc.rank[qi] >= 0 && sc.rank[qi] < free)
	// An entry inserted ahead of later arrivals joins in its own write and
	// is admitted by a later one, so every admission is read from a queue
	// position a committed version shows (the FIFO audit's view).
	if (free > 0 || reclaim >= 0) && eligible && !inserted {
		holder := Holder{
			Entry:      id.entry(work.SchemaVersion, now),
			AcquiredAt: FormatTime(now),
			ExpiresAt:  FormatTime(now.Add(req.Lease)),
		}
		if work.SchemaVersion >= FencedSchemaVersion {
			if work.FencingToken >= MaxFencingToken {
				return nil, AcquireDecision{}, newError(CodeInvalidFencingToken, fmt.Sprintf(
					"acquire %s: the fencing counter is exhausted at %d", work.Lock, work.FencingToken))
			}
			work.FencingToken++
			holder.FencingToken = work.FencingToken
			dec.FencingToken = holder.FencingToken
			if reclaim < 0 {
				// Bounded overtaking: every earlier waiter this admission
				// passes while it is blocked is overtaken once. The scan
				// guarantees each was below cfg.MaxOvertakes.
				for i := range qi {
					if sc.blocked(i) {
						work.Queue[i].Overtakes++
					}
				}
			}
		}
		work.Queue = append(work.Queue[:qi:qi], work.Queue[qi+1:]...)
		if reclaim >= 0 {
			consumed := work.Reservations[reclaim]
			dec.ConsumedQuarantine = &consumed
			dec.QuarantineRecovered = true
			work.Reservations = append(work.Reservations[:reclaim:reclaim], work.Reservations[reclaim+1:]...)
		}
		work.Holders = append(work.Holders, holder)
		out, err := finish(work, now)
		if err != nil {
			return nil, AcquireDecision{}, err
		}
		dec.Outcome, dec.Changed = OutcomeAdmitted, true
		return out, dec, nil
	}

	// Step 11: queued.
	dec.Outcome, dec.Position, dec.Rank, dec.Inserted = OutcomeQueued, qi+1, sc.rank[qi], inserted
	if paused && !sc.reclaim[qi] {
		// The rank once the lock has drained, which the waiter polls by.
		v := upgradeView(work, up)
		dec.Rank = scanQueue(v, cfg, true).rank[QueuePosition(v, id.HolderID)-1]
	}
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

// acquireAsHolder is step 7: fence the existing holder and backfill its jobId.
func acquireAsHolder(s, work *State, hi int, id Identity, serialized bool, now time.Time) (*State, AcquireDecision, error) {
	h := work.Holders[hi]
	if serialized {
		verdict, err := admissionFence(h.Entry, id, "holder", work.Lock)
		if err != nil {
			return nil, AcquireDecision{}, err
		}
		if verdict == fenceNewer {
			return nil, AcquireDecision{}, newError(CodeHolderEarlierAttempt, fmt.Sprintf(
				"acquire %s: holder %s belongs to an earlier run attempt (%s < %s); the scheduled reaper must reconcile it before a rerun can acquire",
				work.Lock, h.HolderID, h.RunAttempt, id.RunAttempt))
		}
	} else if h.RunAttempt == id.RunAttempt {
		if err := jobConflict(h.Entry, id, "holder", work.Lock); err != nil {
			return nil, AcquireDecision{}, err
		}
	}
	dec := AcquireDecision{Outcome: OutcomeAlreadyHolder, FencingToken: h.FencingToken, Seat: h.Seat}
	if id.JobID == "" || h.JobID != "" || h.RunAttempt != id.RunAttempt {
		return s.Clone(), dec, nil
	}
	work.Holders[hi].JobID = id.JobID
	out, err := finish(work, now)
	if err != nil {
		return nil, AcquireDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}

// refreshEntry returns what the caller's existing queue entry should be.
// Under serialization the run-attempt fence runs: the same attempt may only
// backfill a jobId; a newer attempt replaces the entry (keeping its queue
// position). Without serialization there is no fence: the same attempt
// backfills a jobId and a numerically newer canonical attempt replaces it.
// A replacement keeps the stored overtakes with the queue position: a rerun
// inherits its predecessor's fairness budget, it does not get a new one.
func refreshEntry(stored, want Entry, id Identity, serialized bool, lock string) (Entry, error) {
	if serialized {
		verdict, err := admissionFence(stored, id, "queue entry", lock)
		if err != nil {
			return Entry{}, err
		}
		if verdict == fenceNewer {
			want.Overtakes = stored.Overtakes
			return want, nil
		}
	} else {
		if stored.RunAttempt != id.RunAttempt {
			if isCanonicalPositiveDecimal(stored.RunAttempt) && isCanonicalPositiveDecimal(id.RunAttempt) &&
				compareDecimal(id.RunAttempt, stored.RunAttempt) > 0 {
				want.Overtakes = stored.Overtakes
				return want, nil
			}
			return stored, nil
		}
		if err := jobConflict(stored, id, "queue entry", lock); err != nil {
			return Entry{}, err
		}
	}
	if stored.JobID == "" && id.JobID != "" {
		stored.JobID = id.JobID
	}
	if stored.MachineID == "" && want.MachineID != "" {
		// An entry queued before its lock asked for the machine (or by a
		// client that dropped the field) gains it: only ever stronger.
		stored.MachineID = want.MachineID
	}
	if stored.PendingRunnerID == "" && want.PendingRunnerID != "" {
		stored.PendingRunnerID = want.PendingRunnerID
	}
	return stored, nil
}

// dedupeQueue keeps the first entry per holderId (schema 2 may hold
// duplicates; the reference dedupeQueueEntries).
func dedupeQueue(q []Entry) []Entry {
	seen := make(map[string]bool, len(q))
	out := make([]Entry, 0, len(q))
	for _, e := range q {
		if seen[e.HolderID] {
			continue
		}
		seen[e.HolderID] = true
		out = append(out, e)
	}
	return out
}

// queueScan classifies every queue entry for admission. rank[i] >= 0 means
// entry i is taken by the admission scan once rank[i] < freeSlots; -1 means
// it is not (blocked, or admitted only by reclaim). reclaim[i] marks the
// same-runner quarantine reclaim.
type queueScan struct {
	rank    []int
	reclaim []bool
}

// blocked reports whether entry i waits for something other than a free
// seat: an admission that passes it overtakes it.
func (sc queueScan) blocked(i int) bool {
	return sc.rank[i] < 0 && !sc.reclaim[i]
}

// scanQueue is the admission scan (the reference selectEligibleQueueEntries
// plus this port's schema-6 barrier), evaluated for unlimited seats.
//
// Without serialization the rank is the queue index: the first freeSlots
// entries are admitted, so nothing is ever passed.
//
// With serialization the scan walks the queue in FIFO order. "Its runner"
// is every serialization key of the entry (serialKeys: its runner id, and
// under serializeBy "machine" its recorded machine too):
//   - An entry that is the first queued on its runner, while the only
//     holder or reservation on its runner is a quarantine and freeSlots >=
//     0, is reclaim-eligible (schema >= 4): it swaps the quarantine for a
//     holder without taking a seat, so it is neither ranked nor blocked,
//     and no barrier stops it.
//   - An entry whose runner holds a slot or a reservation, or that has an
//     earlier entry on its runner, is blocked (-1). At schema 6 a blocked
//     entry whose overtakes reached cfg.MaxOvertakes is a barrier: every
//     entry behind it is -1 too (reclaim excepted).
//   - Any other entry takes the next rank and marks its runner taken.
func scanQueue(s *State, cfg Config, serialized bool) queueScan {
	sc := queueScan{rank: make([]int, len(s.Queue)), reclaim: make([]bool, len(s.Queue))}
	if !serialized {
		for i := range s.Queue {
			sc.rank[i] = i
		}
		return sc
	}
	keys := newSerialKeys(s, cfg)
	occ := newOccupancy(s, keys)
	canReclaim := s.SchemaVersion >= 4 && FreeSlots(s, cfg) >= 0
	fair := s.SchemaVersion >= FencedSchemaVersion
	seen := keySet{}
	barred := false
	next := 0
	for i, e := range s.Queue {
		sc.rank[i] = -1
		k := keys.of(e.RunnerID, e.MachineID)
		first := !seen.hasAny(k)
		seen.add(k)
		switch {
		case canReclaim && first && occ.quarantine(e) >= 0:
			sc.reclaim[i] = true
		case barred:
		case !first || occ.busy(e):
			if fair && e.Overtakes >= cfg.MaxOvertakes {
				barred = true
			}
		default:
			sc.rank[i] = next
			next++
		}
	}
	return sc
}
