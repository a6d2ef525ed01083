package lockstate

import (
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// This file holds the scheduled reaper's pure side (spec §4.1, §4.2): the
// staleness rules, evaluated on run and job evidence that the caller read
// from the Actions API and passes in, and the Reap transition that applies
// only what that evidence proves.
//
// Evidence is always tied to the exact version of the entry it was gathered
// for (every run-identity field). When the state changed in between (a CAS
// conflict, a rerun that refreshed an entry, a release), the evidence no
// longer matches and nothing is changed: a rerun's fresh entry is never
// reaped by evidence about its previous attempt.

// Reaper reason prefixes (spec §2.6, §4.1).
const (
	// ReasonReapPrefix prefixes the reason of the quarantine a stale holder
	// becomes at schema >= 4: "scheduled stale reaping: <verdict reason>".
	ReasonReapPrefix = "scheduled stale reaping: "
	// ReasonAutoRecoverPrefix prefixes the reason of the cooldown an aged
	// quarantine becomes at schema 5: "auto-recovered stale quarantine
	// (owning run terminal): <old reason>".
	ReasonAutoRecoverPrefix = "auto-recovered stale quarantine (owning run terminal): "
)

// JobStatusCompleted is the only terminal job status; any other status that
// is not active leaves the job's state unknown.
const JobStatusCompleted = "completed"

// activeStatuses are the run and job statuses of work that is still going
// on (spec Appendix A, BL 48).
var activeStatuses = map[string]bool{"queued": true, "in_progress": true, "requested": true, "waiting": true, "pending": true}

// IsActiveStatus reports whether a workflow run or job status means the work
// is still queued or running: queued, in_progress, requested, waiting or
// pending.
func IsActiveStatus(status string) bool { return activeStatuses[status] }

// RunEvidence is what GET /repos/{o}/{r}/actions/runs/{id} proved about the
// workflow run that owns an entry.
type RunEvidence struct {
	// Known is true when the run was read. It is false when its status is
	// unavailable (a 401 after retries, or a run missing from a repository
	// the reader can see): unknown never proves a run finished.
	Known bool
	// Status and Conclusion are the run's status and conclusion as reported.
	Status, Conclusion string
	// RunAttempt is the run's current run_attempt as a decimal string.
	RunAttempt string
}

// JobEvidence is the status of the exact job an entry recorded.
type JobEvidence struct {
	// Known is true only when exactly one job of the entry's run attempt has
	// id == the recorded jobId and runner_name == the recorded runnerId, and
	// its status is active or completed. A job is never inferred from names
	// or timestamps: sequential matrix legs can share one runner.
	Known bool
	// JobID is the job's numeric id.
	JobID string
	// Status and Conclusion are the job's status and conclusion.
	Status, Conclusion string
}

// Evidence is the run and job evidence gathered for one entry.
type Evidence struct {
	Run RunEvidence
	Job JobEvidence
	// ObservedAt is when the run status was read; a lease counts as expired
	// only if it had expired by then. Zero means the transition's now.
	ObservedAt time.Time
}

// Verdict is the outcome of a staleness rule. Stale means proven stale (or,
// for queue entries and quarantines, proven finished); Reason is the
// operator-facing explanation in the reference wording.
type Verdict struct {
	Stale  bool
	Reason string
}

// attemptAdvanced reports whether the run moved past the stored attempt;
// both must be canonical positive decimals.
func attemptAdvanced(run RunEvidence, stored string) bool {
	return isCanonicalPositiveDecimal(run.RunAttempt) && isCanonicalPositiveDecimal(stored) &&
		compareDecimal(run.RunAttempt, stored) > 0
}

// attemptBehind reports whether the run evidence is of an attempt before
// the stored one: it was read before the rerun that created the entry (a
// cached or lagging read), so it says nothing about the entry's attempt.
// Both must be canonical positive decimals.
func attemptBehind(run RunEvidence, stored string) bool {
	return isCanonicalPositiveDecimal(run.RunAttempt) && isCanonicalPositiveDecimal(stored) &&
		compareDecimal(run.RunAttempt, stored) < 0
}

// behindReason is the verdict reason of evidence older than the entry.
func behindReason(what string, run RunEvidence, stored string) string {
	return fmt.Sprintf("run evidence is of attempt %s, before the %s's attempt %s: status unknown", run.RunAttempt, what, stored)
}

// EvaluateHolder is the reference evaluateStale (spec §4.2), in table order:
//
//	known, run_attempt < holder runAttempt          → as unknown (below): the read predates the rerun
//	known, active, run_attempt > holder runAttempt  → stale "workflow run advanced from attempt A to B"
//	known, active, exact job known and active       → keep  "holder job N is <status>"
//	known, active, exact job known and completed    → stale "holder job N is completed"
//	known, active, exact job unknown                → keep  "holder run is <status>"
//	known, not active                               → stale "holder run is <status>"
//	unknown, expiresAt parses and is in the past    → stale "holder lease expired and run status is unavailable"
//	unknown, otherwise                              → keep  "holder status unavailable before lease expiry"
//
// An expired lease alone never makes a holder stale while its run is known
// to be active, and unknown evidence is stale only after the lease expired.
func EvaluateHolder(h Holder, ev Evidence, now time.Time) Verdict {
	observed := ev.ObservedAt
	if observed.IsZero() {
		observed = now
	}
	run := ev.Run
	if !run.Known || attemptBehind(run, h.RunAttempt) {
		// Evidence of an earlier attempt than the holder's was read before
		// the rerun that admitted it (an extension of the reference, which
		// would take "attempt 1 completed" as proof against attempt 2): it
		// is no evidence, so only the lease decides, as for unknown.
		if exp, ok := ParseTime(h.ExpiresAt); ok && exp.Before(observed) {
			return Verdict{Stale: true, Reason: "holder lease expired and run status is unavailable"}
		}
		if run.Known {
			return Verdict{Reason: behindReason("holder", run, h.RunAttempt)}
		}
		return Verdict{Reason: "holder status unavailable before lease expiry"}
	}
	if !IsActiveStatus(run.Status) {
		return Verdict{Stale: true, Reason: "holder run is " + describeStatus(run.Status, run.Conclusion)}
	}
	if attemptAdvanced(run, h.RunAttempt) {
		return Verdict{Stale: true, Reason: fmt.Sprintf("workflow run advanced from attempt %s to %s", h.RunAttempt, run.RunAttempt)}
	}
	if job, ok := exactJob(h.Entry, ev.Job); ok {
		if job.Status == JobStatusCompleted {
			return Verdict{Stale: true, Reason: fmt.Sprintf("holder job %s is completed", job.JobID)}
		}
		return Verdict{Reason: fmt.Sprintf("holder job %s is %s", job.JobID, job.Status)}
	}
	return Verdict{Reason: "holder run is " + run.Status}
}

// QueueEntryFinished is the reference queueEntryIsFinished (spec §4.2): a
// queued request is finished when its run is known and not active, when the
// run advanced past its attempt, or when its exact job is known and not
// active. Unknown evidence keeps the entry (queue entries have no lease
// fallback).
//
// Evidence of an earlier attempt than the entry's (read before the rerun
// that queued it) proves nothing and keeps the entry (simulation seed
// 106635: a run read cached from before a rerun dropped the rerun's entry).
func QueueEntryFinished(e Entry, ev Evidence) Verdict {
	run := ev.Run
	switch {
	case !run.Known:
		return Verdict{Reason: "queued run status unavailable"}
	case attemptBehind(run, e.RunAttempt):
		return Verdict{Reason: behindReason("entry", run, e.RunAttempt)}
	case !IsActiveStatus(run.Status):
		return Verdict{Stale: true, Reason: "queued run is " + describeStatus(run.Status, run.Conclusion)}
	case attemptAdvanced(run, e.RunAttempt):
		return Verdict{Stale: true, Reason: fmt.Sprintf("workflow run advanced from attempt %s to %s", e.RunAttempt, run.RunAttempt)}
	}
	if job, ok := exactJob(e, ev.Job); ok {
		if job.Status == JobStatusCompleted {
			return Verdict{Stale: true, Reason: fmt.Sprintf("queued job %s is completed", job.JobID)}
		}
		return Verdict{Reason: fmt.Sprintf("queued job %s is %s", job.JobID, job.Status)}
	}
	return Verdict{Reason: "queued run is " + run.Status}
}

// QuarantineOwnerFinished reports whether the run that owned a quarantine
// is proven finished: the reference applies queueEntryIsFinished to the
// reservation, which carries no jobId, so only a terminal run status or an
// advanced run attempt proves it (spec §4.1 step 5).
func QuarantineOwnerFinished(r Reservation, ev Evidence) Verdict {
	v := QueueEntryFinished(Entry{RunAttempt: r.RunAttempt}, Evidence{Run: ev.Run, ObservedAt: ev.ObservedAt})
	switch {
	case !ev.Run.Known:
		v.Reason = "owning run status unavailable"
	case attemptBehind(ev.Run, r.RunAttempt):
		v.Reason = behindReason("reservation", ev.Run, r.RunAttempt)
	case !IsActiveStatus(ev.Run.Status):
		v.Reason = "owning run is " + describeStatus(ev.Run.Status, ev.Run.Conclusion)
	case !v.Stale:
		v.Reason = "owning run is " + ev.Run.Status
	}
	return v
}

// exactJob returns the job evidence when it is usable for e: proven, for
// the entry's own recorded job, with an active or completed status.
func exactJob(e Entry, j JobEvidence) (JobEvidence, bool) {
	if !j.Known || e.JobID == "" || j.JobID != e.JobID {
		return JobEvidence{}, false
	}
	if j.Status != JobStatusCompleted && !IsActiveStatus(j.Status) {
		return JobEvidence{}, false
	}
	return j, true
}

func describeStatus(status, conclusion string) string {
	if status == "" {
		status = "without a status"
	}
	if conclusion != "" {
		return status + " (" + conclusion + ")"
	}
	return status
}

// HolderEvidence is the evidence about one holder version. ReservationID
// names the quarantine the holder becomes at schema >= 4 (caller-generated,
// so the transition stays deterministic).
type HolderEvidence struct {
	Holder        Holder
	Evidence      Evidence
	ReservationID string
}

// QuarantineEvidence is the evidence about the run that owned one
// quarantine version.
type QuarantineEvidence struct {
	Reservation Reservation
	Evidence    Evidence
}

// QueueEvidence is the evidence about one queue entry version.
type QueueEvidence struct {
	Entry    Entry
	Evidence Evidence
}

// ReapRequest carries the evidence the reaper gathered. Every item names
// the exact version it was gathered for; items may be any subset (one
// holder per checkpoint, the scanned FIFO prefix of the queue, ...).
type ReapRequest struct {
	// Holders are evaluated with EvaluateHolder; a proven stale holder is
	// quarantined (schema >= 4) or dropped (schema < 4).
	Holders []HolderEvidence
	// Quarantines are auto-recovered at schema 5 when the owning run is
	// proven finished and createdAt is at least LeaseGrace old, unless an
	// account incident is active.
	Quarantines []QuarantineEvidence
	// Queue entries proven finished are removed; the rest keep their order.
	Queue []QueueEvidence
	// LeaseGrace is the quarantine auto-recovery grace (the holder lease,
	// 240 minutes by default). It must be positive when Quarantines is set.
	LeaseGrace time.Duration
}

// ReapKind names what an item of a ReapRequest was about.
type ReapKind string

// Reap item kinds.
const (
	ReapHolder     ReapKind = "holder"
	ReapQuarantine ReapKind = "quarantine"
	ReapQueueEntry ReapKind = "queue-entry"
)

// ReapOutcome is what Reap did with one item.
type ReapOutcome string

// Reap outcomes.
const (
	// ReapQuarantined: a stale holder became a quarantine (schema >= 4).
	ReapQuarantined ReapOutcome = "quarantined"
	// ReapFreed: a stale holder was dropped (schema < 4), or an aged
	// quarantine was dropped because the cooldown is 0.
	ReapFreed ReapOutcome = "freed"
	// ReapAutoRecovered: an aged quarantine became a cooldown.
	ReapAutoRecovered ReapOutcome = "auto-recovered"
	// ReapDropped: a finished queue entry was removed.
	ReapDropped ReapOutcome = "dropped"
	// ReapKept: the evidence does not prove the item stale.
	ReapKept ReapOutcome = "kept"
	// ReapNoLongerMatches: the item changed or disappeared since the
	// evidence was gathered; nothing was applied.
	ReapNoLongerMatches ReapOutcome = "no-longer-matches"
	// ReapIncidentActive: auto-recovery is skipped while an account
	// incident is active.
	ReapIncidentActive ReapOutcome = "skipped-incident-active"
	// ReapTooYoung: the quarantine is younger than the lease grace.
	ReapTooYoung ReapOutcome = "kept-within-grace"
	// ReapNotEligible: auto-recovery needs schema 5.
	ReapNotEligible ReapOutcome = "kept-schema-below-5"
)

// ReapItem reports the decision about one evidence item, in request order.
type ReapItem struct {
	Kind ReapKind
	// ID is the holderId (holders, queue entries) or reservationId.
	ID      string
	Verdict Verdict
	Outcome ReapOutcome
	// Reservation is the quarantine created for a holder, or the cooldown an
	// aged quarantine became.
	Reservation *Reservation
}

// Applied reports whether the item changed the state.
func (i ReapItem) Applied() bool {
	switch i.Outcome {
	case ReapQuarantined, ReapFreed, ReapAutoRecovered, ReapDropped:
		return true
	}
	return false
}

// ReapDecision describes what Reap did.
type ReapDecision struct {
	// Changed is true iff the returned state must be written; when false
	// the returned state equals the input.
	Changed bool
	// Items has one entry per evidence item: holders, then quarantines,
	// then queue entries, each in request order.
	Items []ReapItem
	// PrunedCooldowns counts expired cooldowns dropped in the same write.
	PrunedCooldowns int
	// IncidentActive reports that quarantine auto-recovery was skipped
	// because an account incident is active.
	IncidentActive bool
}

// Applied returns the items that changed the state.
func (d ReapDecision) Applied() []ReapItem {
	var out []ReapItem
	for _, it := range d.Items {
		if it.Applied() {
			out = append(out, it)
		}
	}
	return out
}

// Reap applies the reaper's proven transitions to s (spec §4.1), in this
// order, after pruning expired cooldowns:
//
//  1. Every holder proven stale by EvaluateHolder whose exact version (all
//     run-identity fields) is still present is removed; at schema >= 4 it
//     becomes a quarantine with reason "scheduled stale reaping: <reason>"
//     on its runner, which keeps consuming capacity.
//  2. At schema 5 with no active incident, every quarantine whose exact
//     version is still present, whose createdAt is at least LeaseGrace old
//     and whose owning run is proven finished becomes a cooldown
//     ("auto-recovered stale quarantine (owning run terminal): <old
//     reason>", availableAt = now + releaseCooldownSeconds), or is removed
//     outright when the cooldown is 0 (never an invalid reservation).
//  3. Every queue entry proven finished whose exact version is present is
//     removed; the remaining entries keep their FIFO order.
//
// Nothing else changes: every other field, including fields this function
// does not know about, is carried over from s. An account incident never
// stops holder or queue reaping; it only gates step 2. s is never modified.
func Reap(s *State, cfg Config, req ReapRequest, now time.Time) (*State, ReapDecision, error) {
	if s == nil {
		return nil, ReapDecision{}, newError(CodeInvalidState, "reap lock: state is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, ReapDecision{}, err
	}
	if err := validateState(s, ""); err != nil {
		return nil, ReapDecision{}, err
	}
	if len(req.Quarantines) > 0 && req.LeaseGrace <= 0 {
		return nil, ReapDecision{}, newError(CodeInvalidLease, fmt.Sprintf("reap %s: quarantine auto-recovery grace %s must be positive", s.Lock, req.LeaseGrace))
	}
	work := s.Clone()
	dec := ReapDecision{PrunedCooldowns: pruneExpired(work, now)}

	for _, he := range req.Holders {
		it := ReapItem{Kind: ReapHolder, ID: he.Holder.HolderID, Verdict: EvaluateHolder(he.Holder, he.Evidence, now), Outcome: ReapKept}
		if it.Verdict.Stale {
			if err := reapHolder(work, he, &it, now); err != nil {
				return nil, ReapDecision{}, err
			}
		}
		dec.Items = append(dec.Items, it)
	}

	for _, qe := range req.Quarantines {
		it := ReapItem{Kind: ReapQuarantine, ID: qe.Reservation.ReservationID, Verdict: QuarantineOwnerFinished(qe.Reservation, qe.Evidence)}
		switch {
		case work.SchemaVersion < 5:
			it.Outcome = ReapNotEligible
		case work.ActiveIncident != nil:
			it.Outcome = ReapIncidentActive
			dec.IncidentActive = true
		default:
			autoRecover(work, cfg, qe, &it, req.LeaseGrace, now)
		}
		dec.Items = append(dec.Items, it)
	}

	for _, qe := range req.Queue {
		it := ReapItem{Kind: ReapQueueEntry, ID: qe.Entry.HolderID, Verdict: QueueEntryFinished(qe.Entry, qe.Evidence), Outcome: ReapKept}
		if it.Verdict.Stale {
			kept := work.Queue[:0:0]
			for _, e := range work.Queue {
				if sameEntryVersion(e, qe.Entry) {
					continue
				}
				kept = append(kept, e)
			}
			if len(kept) == len(work.Queue) {
				it.Outcome = ReapNoLongerMatches
			} else {
				it.Outcome = ReapDropped
				work.Queue = kept
			}
		}
		dec.Items = append(dec.Items, it)
	}

	changed := dec.PrunedCooldowns > 0
	for _, it := range dec.Items {
		changed = changed || it.Applied()
	}
	if !changed {
		return s.Clone(), dec, nil
	}
	out, err := finish(work, now)
	if err != nil {
		return nil, ReapDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}

// reapHolder removes the exact holder version and, at schema >= 4, records
// its quarantine.
func reapHolder(work *State, he HolderEvidence, it *ReapItem, now time.Time) error {
	idx := -1
	for i, h := range work.Holders {
		if sameRunVersion(h, he.Holder) {
			idx = i
			break
		}
	}
	if idx < 0 {
		it.Outcome = ReapNoLongerMatches
		return nil
	}
	h := work.Holders[idx]
	if work.SchemaVersion >= 4 {
		id := jsTrim(he.ReservationID)
		if id == "" {
			return newError(CodeReservationIDRequired, fmt.Sprintf("reap %s: a reservation ID is required to quarantine stale holder %s", work.Lock, h.HolderID))
		}
		for _, r := range work.Reservations {
			if r.ReservationID == id {
				return newError(CodeDuplicateReservation, fmt.Sprintf("reap %s: reservation %s already exists", work.Lock, id))
			}
		}
		r := Reservation{
			ReservationID: id,
			HolderID:      h.HolderID,
			Repository:    h.Repository,
			Workflow:      h.Workflow,
			Job:           h.Job,
			RunID:         h.RunID,
			RunAttempt:    h.RunAttempt,
			RunURL:        h.RunURL,
			RunnerID:      h.RunnerID,
			MachineID:     h.MachineID,
			Reason:        ReasonReapPrefix + it.Verdict.Reason,
			Seat:          h.Seat,
			State:         ReservationQuarantine,
			CreatedAt:     FormatTime(now),
		}
		work.Reservations = append(work.Reservations, r)
		it.Reservation = &r
		it.Outcome = ReapQuarantined
	} else {
		it.Outcome = ReapFreed
	}
	work.Holders = append(work.Holders[:idx:idx], work.Holders[idx+1:]...)
	return nil
}

// autoRecover converts one aged quarantine of a finished run (schema 5, no
// incident) to a cooldown, or frees it when the cooldown is 0.
func autoRecover(work *State, cfg Config, qe QuarantineEvidence, it *ReapItem, grace time.Duration, now time.Time) {
	it.Outcome = ReapKept
	if !it.Verdict.Stale && !plant.Enabled(plant.QuarantineOnTimeAlone) { // planted bug (tests only)
		return
	}
	created, ok := ParseTime(qe.Reservation.CreatedAt)
	if !ok || created.Add(grace).After(now) {
		it.Outcome = ReapTooYoung
		return
	}
	idx := -1
	for i, r := range work.Reservations {
		if r.State == ReservationQuarantine && sameReservationVersion(r, qe.Reservation) {
			idx = i
			break
		}
	}
	if idx < 0 {
		it.Outcome = ReapNoLongerMatches
		return
	}
	if cfg.ReleaseCooldownSeconds <= 0 {
		work.Reservations = append(work.Reservations[:idx:idx], work.Reservations[idx+1:]...)
		it.Outcome = ReapFreed
		return
	}
	r := &work.Reservations[idx]
	r.State = ReservationCooldown
	r.Reason = ReasonAutoRecoverPrefix + r.Reason
	r.AvailableAt = FormatTime(now.Add(time.Duration(cfg.ReleaseCooldownSeconds) * time.Second))
	c := *r
	it.Reservation = &c
	it.Outcome = ReapAutoRecovered
}

// sameEntryVersion is the reference sameReapRunVersion for queue entries:
// every run-identity field must be equal, so a rerun's refreshed entry (new
// attempt, new queuedAt) never matches evidence about the old one.
func sameEntryVersion(a, b Entry) bool {
	return a.HolderID == b.HolderID && a.Repository == b.Repository && a.Workflow == b.Workflow &&
		a.Job == b.Job && a.RunID == b.RunID && a.RunAttempt == b.RunAttempt && a.RunURL == b.RunURL &&
		a.QueuedAt == b.QueuedAt && a.RunnerID == b.RunnerID && a.JobID == b.JobID &&
		a.RunnerName == b.RunnerName && a.RunnerOS == b.RunnerOS && a.RunnerArch == b.RunnerArch &&
		a.MachineID == b.MachineID
}

// sameRunVersion is the reference sameReapRunVersion for holders: the entry
// fields plus acquiredAt and expiresAt.
//
// At schema 6 the fencing token names the exact admission, so it must match
// too: evidence gathered about one admission never removes another.
func sameRunVersion(a, b Holder) bool {
	return sameEntryVersion(a.Entry, b.Entry) && a.AcquiredAt == b.AcquiredAt && a.ExpiresAt == b.ExpiresAt &&
		a.FencingToken == b.FencingToken
}

// sameReservationVersion is the reference sameReapReservationVersion: every
// reservation field must be equal.
func sameReservationVersion(a, b Reservation) bool {
	return a.ReservationID == b.ReservationID && a.HolderID == b.HolderID && a.Repository == b.Repository &&
		a.Workflow == b.Workflow && a.Job == b.Job && a.RunID == b.RunID && a.RunAttempt == b.RunAttempt &&
		a.RunURL == b.RunURL && a.RunnerID == b.RunnerID && a.Reason == b.Reason && a.State == b.State &&
		a.CreatedAt == b.CreatedAt && a.AvailableAt == b.AvailableAt && a.MachineID == b.MachineID
}
