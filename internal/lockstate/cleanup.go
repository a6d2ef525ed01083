package lockstate

import (
	"fmt"
	"time"
)

// Default reservation reasons used when the caller supplied no report reason.
const (
	// ReasonDefaultConfirmed is the reference's reason for a resource-safe release.
	ReasonDefaultConfirmed = "release cleanup confirmed resource-safe"
	// ReasonDefaultUnproven is the reference's reason for an unproven release.
	ReasonDefaultUnproven = "release cleanup was not proven resource-safe"
)

// CleanupResult names what a cleanup did (cleanupResultName, spec §1.4).
type CleanupResult string

// Cleanup results in the reference's first-match order.
const (
	// ResultGlobalQuarantined means a schema-5 incident exists after the cleanup.
	ResultGlobalQuarantined CleanupResult = "global-quarantined"
	// ResultCooldownStarted means a cooldown reservation was created.
	ResultCooldownStarted CleanupResult = "cooldown-started"
	// ResultQuarantined means a quarantine reservation was created.
	ResultQuarantined CleanupResult = "quarantined"
	// ResultReleased means a holder was removed without a reservation.
	ResultReleased CleanupResult = "released"
	// ResultQueueCleaned means only a queue entry was removed.
	ResultQueueCleaned CleanupResult = "queue-cleaned"
	// ResultNoop means there was nothing to remove.
	ResultNoop CleanupResult = "noop"
	// ResultLockReleaseUnreachable is decided by the release caller, never by
	// Cleanup: confirmed cleanup whose state file stayed unreachable.
	ResultLockReleaseUnreachable CleanupResult = "lock-release-unreachable"
)

// CleanupRequest asks Cleanup to remove the caller's own queue entries and
// holder slot (the reference cleanupIdentity).
type CleanupRequest struct {
	HolderID, RunAttempt, RunnerID string
	// Report is the (already validated) cleanup evidence. The zero Report
	// means unknown/healthy without a reason (post and timeout cleanup).
	Report Report
	// QueueOnly removes only queue entries (incident seen while queued).
	QueueOnly bool
	// PreActivation retracts this invocation's own admission before licensed
	// work started: no reservation is created.
	PreActivation bool
	// RestoreQuarantine, with PreActivation, puts back the quarantine
	// consumed by the retracted admission.
	RestoreQuarantine *Reservation
	// ReservationID is used if a reservation is created (caller-generated).
	ReservationID string
	// Identity is the caller identity an incident is built from (schema 5,
	// blocked report).
	Identity Identity
	// ServerURL is GITHUB_SERVER_URL for the incident runUrl ("" = default).
	ServerURL string
	// RunnerName is the runner this cleanup runs on (RUNNER_NAME) when the
	// holderId was computed from this job's own environment. An entry of the
	// same holderId and run attempt recorded on another runner belongs to
	// another job that shares the holderId; it is kept and counted in
	// CleanupDecision.ForeignKept. Leave it "" for a cleanup by explicit
	// holder-id (a fallback job on another runner), which keeps the
	// reference's ownership rule.
	RunnerName string
}

// CleanupDecision describes what Cleanup did.
type CleanupDecision struct {
	Result       CleanupResult
	Released     bool
	QueueCleaned bool
	// Changed is true iff the returned state must be written; when false the
	// returned state equals the input.
	Changed bool
	// Reservation is the reservation created (or restored), if any.
	Reservation *Reservation
	// QuarantineSubsumed names the consumed quarantine a pre-activation
	// retraction did not put back because its machine seated another
	// holder or reservation meanwhile (docs/machine-queue.md).
	QuarantineSubsumed string
	// QuarantineReattributed reports a restored quarantine recorded under
	// the retracted holder's runner id because its own runner id holds
	// another seat now (a sibling on its machine had reclaimed it).
	QuarantineReattributed bool
	// IncidentID is the active incident after the cleanup, if any.
	IncidentID string
	// HeldBy and HeldByRunURL describe the first remaining holder.
	HeldBy, HeldByRunURL string
	// ForeignKept counts entries of the caller's holderId and attempt that
	// were kept because they are recorded on another runner
	// (CleanupRequest.RunnerName).
	ForeignKept int
	// MigratedTo is the schema reached by a pending upgrade that this
	// cleanup's write also carries (the release of the last holder drained
	// the lock), or 0.
	MigratedTo int
}

// Cleanup is one round of the reference cleanupIdentity (spec §3.7 steps 1-8,
// §2.6, §2.7): raise the account incident for a blocked report at schema 5,
// prune expired cooldowns, remove the caller's owned queue entries and (unless
// QueueOnly) owned holders, then turn the first removed holder into a
// cooldown or quarantine at schema >= 4. A confirmed release with a cooldown
// of 0 seconds frees the slot without a reservation. Ownership needs the same
// holderId and, from schema 3 (or below it while an upgrade to 3 or later
// is pending), a caller attempt >= the stored attempt; a stale caller owns
// nothing. A pending upgrade that finds nothing left to
// drain after the removal is written in the same state (MigratedTo). s is
// never modified.
func Cleanup(s *State, cfg Config, req CleanupRequest, now time.Time) (*State, CleanupDecision, error) {
	if s == nil {
		return nil, CleanupDecision{}, newError(CodeInvalidState, "clean up lock: state is nil")
	}
	lock := s.Lock
	if err := cfg.validate(); err != nil {
		return nil, CleanupDecision{}, err
	}
	if req.HolderID == "" {
		return nil, CleanupDecision{}, newError(CodeInvalidIdentity, fmt.Sprintf("clean up %s: holder-id is empty", lock))
	}
	if err := validateState(s, ""); err != nil {
		return nil, CleanupDecision{}, err
	}
	report, err := cleanupReport(req.Report, lock)
	if err != nil {
		return nil, CleanupDecision{}, err
	}
	work := s.Clone()
	schema := work.SchemaVersion
	runner := jsTrim(req.RunnerID)
	if schema >= 3 && runner == "" {
		return nil, CleanupDecision{}, newError(CodeRunnerIDRequired, fmt.Sprintf(
			"clean up %s: runner-id is required to clean up schema %d lock ownership", lock, schema))
	}

	// Step 2: incident.
	incidentCreated := false
	blocked := schema >= 5 && report.Health == HealthBlocked
	if blocked && work.ActiveIncident == nil {
		inc, err := IncidentFor(req.Identity, now, req.ServerURL)
		if err != nil {
			return nil, CleanupDecision{}, err
		}
		work.ActiveIncident = inc
		incidentCreated = true
	}
	// Step 3.
	expired := pruneExpired(work, now)

	// Steps 4-5. While an upgrade to schema 3 or later is pending, the
	// run-attempt fence already decides removals: the write may carry the
	// upgrade (below), and a stale attempt must not remove a newer attempt's
	// entry in a state that enforces the fence.
	pendingFence := schema < 3 && TargetSchema(cfg) >= 3
	ownsEntry := func(e Entry, holderID, attempt string, schema int, lock string) (bool, error) {
		owned, err := ownsEntry(e, holderID, attempt, schema, lock)
		if err == nil && owned && pendingFence && isCanonicalPositiveDecimal(e.RunAttempt) &&
			isCanonicalPositiveDecimal(attempt) && compareDecimal(attempt, e.RunAttempt) < 0 {
			owned = false
		}
		return owned, err
	}
	var dec CleanupDecision
	keptQueue := make([]Entry, 0, len(work.Queue))
	for _, e := range work.Queue {
		owned, err := ownsEntry(e, req.HolderID, req.RunAttempt, schema, lock)
		if err != nil {
			return nil, CleanupDecision{}, err
		}
		if owned && foreignRunner(e, req.RunAttempt, req.RunnerName) {
			owned = false
			dec.ForeignKept++
		}
		if owned {
			dec.QueueCleaned = true
			continue
		}
		keptQueue = append(keptQueue, e)
	}
	work.Queue = keptQueue
	var removed []Holder
	if !req.QueueOnly {
		kept := make([]Holder, 0, len(work.Holders))
		for _, h := range work.Holders {
			owned, err := ownsEntry(h.Entry, req.HolderID, req.RunAttempt, schema, lock)
			if err != nil {
				return nil, CleanupDecision{}, err
			}
			if owned && foreignRunner(h.Entry, req.RunAttempt, req.RunnerName) {
				owned = false
				dec.ForeignKept++
			}
			if owned {
				removed = append(removed, h)
				continue
			}
			kept = append(kept, h)
		}
		work.Holders = kept
	}
	dec.Released = len(removed) > 0

	// Step 6: reservation for removedHolders[0] only.
	var created *Reservation
	if dec.Released && schema >= 4 {
		var err error
		if req.PreActivation {
			created, err = restoreQuarantine(work, removed[0], req.RestoreQuarantine)
			if err == nil && req.RestoreQuarantine != nil {
				if created == nil {
					dec.QuarantineSubsumed = req.RestoreQuarantine.ReservationID
				} else if created.RunnerID != req.RestoreQuarantine.RunnerID {
					dec.QuarantineReattributed = true
				}
			}
		} else if !blocked {
			created, err = releaseReservation(work, cfg, removed[0], report, req.ReservationID, now)
		}
		if err != nil {
			return nil, CleanupDecision{}, err
		}
		if created != nil {
			work.Reservations = append(work.Reservations, *created)
			c := *created
			dec.Reservation = &c
		}
	}

	// A pending upgrade with nothing left to drain rides on this cleanup's
	// write (when there is one, step 8): whichever writer finds the lock
	// drained writes it, a release included (docs/state-schema.md §10).
	if dec.Released || dec.QueueCleaned || expired > 0 || incidentCreated {
		if up := planUpgrade(work, cfg, ""); up.Ready() {
			applyUpgrade(work, up, "", "")
			dec.MigratedTo = up.To
		}
	}

	// Step 7.
	if len(work.Holders) > 0 {
		dec.HeldBy, dec.HeldByRunURL = work.Holders[0].HolderID, work.Holders[0].RunURL
	}
	globalQuarantined := schema >= 5 && work.ActiveIncident != nil
	if globalQuarantined {
		dec.IncidentID = work.ActiveIncident.IncidentID
	}
	switch {
	case globalQuarantined:
		dec.Result = ResultGlobalQuarantined
	case created != nil && !req.PreActivation && created.State == ReservationCooldown:
		dec.Result = ResultCooldownStarted
	case created != nil && !req.PreActivation:
		dec.Result = ResultQuarantined
	case dec.Released:
		dec.Result = ResultReleased
	case dec.QueueCleaned:
		dec.Result = ResultQueueCleaned
	default:
		dec.Result = ResultNoop
	}

	// Step 8.
	if !(dec.Released || dec.QueueCleaned || expired > 0 || incidentCreated) {
		return s.Clone(), dec, nil
	}
	out, err := finish(work, now)
	if err != nil {
		return nil, CleanupDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}

// cleanupReport validates a non-zero report; the zero Report is
// unknown/healthy with no reason.
func cleanupReport(r Report, lock string) (Report, error) {
	if r == (Report{}) {
		return Report{Status: StatusUnknown, Health: HealthHealthy}, nil
	}
	out, code := ValidateReport(r, "")
	if code != "" {
		return Report{}, newError(CodeInvalidReport, fmt.Sprintf("clean up %s: cleanup report is invalid (%s)", lock, code))
	}
	return out, nil
}

// releaseReservation builds the cooldown or quarantine for a removed holder,
// or nil for a confirmed release with a cooldown <= 0.
func releaseReservation(s *State, cfg Config, h Holder, report Report, reservationID string, now time.Time) (*Reservation, error) {
	confirmed := report.Status == StatusConfirmed
	if confirmed && cfg.ReleaseCooldownSeconds <= 0 {
		return nil, nil
	}
	id := jsTrim(reservationID)
	if id == "" {
		return nil, newError(CodeReservationIDRequired, fmt.Sprintf("clean up %s: a reservation ID is required to reserve the released slot", s.Lock))
	}
	for _, r := range s.Reservations {
		if r.ReservationID == id {
			return nil, newError(CodeDuplicateReservation, fmt.Sprintf("clean up %s: reservation %s already exists", s.Lock, id))
		}
	}
	reason := report.Reason
	if reason == "" {
		reason = ReasonDefaultUnproven
		if confirmed {
			reason = ReasonDefaultConfirmed
		}
	}
	r := &Reservation{
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
		Reason:        reason,
		Seat:          h.Seat,
		State:         ReservationQuarantine,
		CreatedAt:     FormatTime(now),
	}
	if confirmed {
		r.State = ReservationCooldown
		r.AvailableAt = FormatTime(now.Add(time.Duration(cfg.ReleaseCooldownSeconds) * time.Second))
	}
	return r, nil
}

// restoreQuarantine puts back the exact quarantine a retracted admission
// consumed, refusing another runner, another state or an existing ID.
func restoreQuarantine(s *State, h Holder, q *Reservation) (*Reservation, error) {
	if q == nil {
		return nil, nil
	}
	fail := func(detail string) (*Reservation, error) {
		return nil, newError(CodeInvalidQuarantineRestore, fmt.Sprintf("restore quarantine %s on %s: %s", q.ReservationID, s.Lock, detail))
	}
	if q.State != ReservationQuarantine {
		return fail("reservation is not a quarantine")
	}
	if !sameMachineOrRunner(h.RunnerID, h.MachineID, *q) {
		// A sibling agent on the quarantine's machine may have reclaimed
		// it (serializeBy "machine"): the same runner or the same machine.
		return fail(fmt.Sprintf("quarantine runner %q differs from the retracted holder runner %q (and they record no common machine)", q.RunnerID, h.RunnerID))
	}
	for _, r := range s.Reservations {
		if r.ReservationID == q.ReservationID {
			return fail("reservation ID already exists")
		}
	}
	// The occupancy index of the serialization keys (machine.go) says who
	// holds the quarantine's runner id and machine now.
	occupied := newOccupancy(s, serialKeys{byMachine: true}).by
	if q.MachineID != "" && len(occupied["m:"+q.MachineID]) > 0 {
		// The quarantine's machine seated someone else while the retracted
		// holder had it (a reclaim by the runner key, from another
		// machine): that occupant now answers for the machine's seat, as
		// a sibling's reclaim would. Putting the quarantine back would
		// record the machine twice; it is subsumed instead.
		return nil, nil
	}
	c := *q
	if len(occupied["r:"+q.RunnerID]) > 0 {
		// A sibling on the quarantine's machine reclaimed it, and an agent
		// of the quarantine's runner id on another machine took a seat
		// since. The machine still needs its quarantine; it is put back in
		// the name of the retracted holder's runner, which is on that
		// machine and whose runner key the retraction frees.
		c.RunnerID = h.RunnerID
	}
	return &c, nil
}
