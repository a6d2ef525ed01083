package lockstate

import (
	"fmt"
	"time"
)

// Operator recovery reasons (spec §4.3, §4.4).
const (
	// ReasonOperatorRecovery is the reason of a quarantine an operator moved to cooldown.
	ReasonOperatorRecovery = "operator confirmed external resource cleanup"
	// IncidentRecoverySuffix is the holder-id suffix of an incident-recovery cooldown.
	IncidentRecoverySuffix = "incident-recovery"
)

// RecoverDecision describes what a recovery transition did.
type RecoverDecision struct {
	// Changed is always true on success: recovery always writes.
	Changed bool
	// Reservation is the resulting cooldown, or nil when the cooldown is 0
	// and the slot was freed outright.
	Reservation *Reservation
	// Freed reports that no reservation was written (cooldown 0, or
	// NoFreeSeat).
	Freed bool
	// NoFreeSeat reports that an incident recovery wrote no recovery
	// cooldown although releaseCooldownSeconds is above 0, because every
	// seat is held or reserved: the incident's job held no seat when it
	// reported, and a cooldown on top of full seats would count one seat
	// more than maxHolders (R-S1). The seats in use already keep the next
	// activation waiting until one of them is released, and that release
	// writes its own cooldown.
	NoFreeSeat bool
	// PrunedCooldowns counts expired cooldowns dropped in the same write.
	PrunedCooldowns int
}

// RecoverQuarantine is the operator recover transition (spec §4.3): the
// quarantine with exactly reservationID becomes a cooldown with reason
// ReasonOperatorRecovery and availableAt = now + releaseCooldownSeconds. With
// a cooldown of 0 the quarantine is removed and the slot freed without a
// reservation. The caller must already hold resource-safe=true proof.
// A missing reservation (or one that is already a cooldown) is
// CodeReservationNotFound; the caller decides whether an earlier ambiguous
// write makes that success. s is never modified.
func RecoverQuarantine(s *State, cfg Config, reservationID string, now time.Time) (*State, RecoverDecision, error) {
	if s == nil {
		return nil, RecoverDecision{}, newError(CodeInvalidState, "recover reservation: state is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, RecoverDecision{}, err
	}
	if s.SchemaVersion < 4 {
		return nil, RecoverDecision{}, newError(CodeSchemaTooOld, fmt.Sprintf("recover reservation on %s: manual reservation recovery requires schema 4 state, found schema %d", s.Lock, s.SchemaVersion))
	}
	id := jsTrim(reservationID)
	if id == "" {
		return nil, RecoverDecision{}, newError(CodeReservationIDRequired, fmt.Sprintf("recover reservation on %s: reservation-id is required", s.Lock))
	}
	if err := validateState(s, ""); err != nil {
		return nil, RecoverDecision{}, err
	}
	work := s.Clone()
	dec := RecoverDecision{PrunedCooldowns: pruneExpired(work, now)}
	idx := -1
	for i, r := range work.Reservations {
		if r.ReservationID == id && r.State == ReservationQuarantine {
			idx = i
		}
	}
	if idx < 0 {
		return nil, RecoverDecision{}, newError(CodeReservationNotFound, fmt.Sprintf("recover reservation on %s: active quarantine reservation %s was not found", s.Lock, id))
	}
	if cfg.ReleaseCooldownSeconds <= 0 {
		work.Reservations = append(work.Reservations[:idx:idx], work.Reservations[idx+1:]...)
		dec.Freed = true
	} else {
		r := &work.Reservations[idx]
		r.State = ReservationCooldown
		r.Reason = ReasonOperatorRecovery
		r.AvailableAt = FormatTime(now.Add(time.Duration(cfg.ReleaseCooldownSeconds) * time.Second))
		c := *r
		dec.Reservation = &c
	}
	out, err := finish(work, now)
	if err != nil {
		return nil, RecoverDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}

// RecoverIncident is the operator recover-incident transition (spec §4.4):
// the active incident with exactly incidentID (bound by the caller at its
// first read and frozen across CAS retries) is cleared and its runner enters
// a cooldown reservation reservationID (holderId
// "<repo>:<runId>:<job>:incident-recovery", reason "portal cleanup confirmed
// for <id>"). The caller must already hold portal-cleanup-confirmed=true
// proof.
//
// Unlike the reference (spec §2.9, Appendix B item 7), a cooldown of 0 frees
// the slot without writing a reservation instead of writing one with
// availableAt == createdAt, which would make every later read fail closed.
// A runner that already has a reservation, or a holder (which the reference
// would turn into an unreadable state), is refused with CodeRunnerConflict.
// When every seat is held or reserved after the expired cooldowns are
// pruned, no recovery cooldown is written (RecoverDecision.NoFreeSeat): the
// reference would put one on top of full seats, past maxHolders (divergence
// V5). s is never modified.
func RecoverIncident(s *State, cfg Config, incidentID string, now time.Time, reservationID string) (*State, RecoverDecision, error) {
	if s == nil {
		return nil, RecoverDecision{}, newError(CodeInvalidState, "recover incident: state is nil")
	}
	if err := cfg.validate(); err != nil {
		return nil, RecoverDecision{}, err
	}
	if s.SchemaVersion < 5 {
		return nil, RecoverDecision{}, newError(CodeSchemaTooOld, fmt.Sprintf("recover incident on %s: global incident recovery requires schema 5 state, found schema %d", s.Lock, s.SchemaVersion))
	}
	if incidentID == "" {
		return nil, RecoverDecision{}, newError(CodeIncidentNotFound, fmt.Sprintf("recover incident on %s: an exact incident-id is required; bind the active incident's ID at the first read", s.Lock))
	}
	if err := validateState(s, ""); err != nil {
		return nil, RecoverDecision{}, err
	}
	inc := s.ActiveIncident
	if inc == nil || inc.IncidentID != incidentID {
		return nil, RecoverDecision{}, newError(CodeIncidentNotFound, fmt.Sprintf("recover incident on %s: active global incident %s was not found", s.Lock, incidentID))
	}
	work := s.Clone()
	dec := RecoverDecision{PrunedCooldowns: pruneExpired(work, now)}
	for _, r := range work.Reservations {
		if r.RunnerID == inc.RunnerID {
			return nil, RecoverDecision{}, newError(CodeRunnerConflict, fmt.Sprintf(
				"recover incident on %s: runner %q already has lifecycle reservation %s; drain it before incident recovery", s.Lock, inc.RunnerID, r.ReservationID))
		}
	}
	for _, h := range work.Holders {
		if h.RunnerID == inc.RunnerID {
			return nil, RecoverDecision{}, newError(CodeRunnerConflict, fmt.Sprintf(
				"recover incident on %s: runner %q is held by %s; wait for it to release before incident recovery", s.Lock, inc.RunnerID, h.HolderID))
		}
	}
	id := jsTrim(reservationID)
	switch {
	case cfg.ReleaseCooldownSeconds <= 0:
		dec.Freed = true
	case id == "":
		return nil, RecoverDecision{}, newError(CodeReservationIDRequired, fmt.Sprintf("recover incident on %s: a reservation ID is required for the recovery cooldown", s.Lock))
	case FreeSlots(work, cfg) <= 0:
		dec.Freed, dec.NoFreeSeat = true, true
	default:
		for _, r := range work.Reservations {
			if r.ReservationID == id {
				return nil, RecoverDecision{}, newError(CodeDuplicateReservation, fmt.Sprintf("recover incident on %s: reservation %s already exists", s.Lock, id))
			}
		}
		r := Reservation{
			ReservationID: id,
			HolderID:      inc.Repository + ":" + inc.RunID + ":" + inc.Job + ":" + IncidentRecoverySuffix,
			Repository:    inc.Repository,
			Workflow:      inc.Workflow,
			Job:           inc.Job,
			RunID:         inc.RunID,
			RunAttempt:    inc.RunAttempt,
			RunURL:        inc.RunURL,
			RunnerID:      jsTrim(inc.RunnerID),
			Reason:        "portal cleanup confirmed for " + inc.IncidentID,
			State:         ReservationCooldown,
			CreatedAt:     FormatTime(now),
			AvailableAt:   FormatTime(now.Add(time.Duration(cfg.ReleaseCooldownSeconds) * time.Second)),
		}
		work.Reservations = append(work.Reservations, r)
		dec.Reservation = &r
	}
	work.ActiveIncident = nil
	out, err := finish(work, now)
	if err != nil {
		return nil, RecoverDecision{}, err
	}
	dec.Changed = true
	return out, dec, nil
}
