package linearizability

// The semaphore's sequential specification (LockRules.Judge): its vocabulary
// (actors, violations and their codes, evidence, steps), the judge, and the rules
// over the whole state (schema, occupancy, duplicates, ownership). The admission
// rules are in rules_admission.go, the removal rules in rules_removal.go.

import (
	"fmt"
	"strconv"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// DefaultQuarantineGrace is the reaper's quarantine auto-recovery grace (the
// default holder lease, spec §4.1 step 5).
const DefaultQuarantineGrace = 240 * time.Minute

// LockRules are the parameters of the semaphore's sequential specification
// for one lock.
type LockRules struct {
	// Lock is the lock name every version must carry.
	Lock string
	// ServerURL validates incident run URLs when decoding (default
	// https://github.com).
	ServerURL string
	// MaxHolders is the configured number of seats.
	MaxHolders int
	// MaxOvertakes is the configured overtaking bound (schema 6).
	MaxOvertakes int
	// QuarantineGrace is the age a quarantine must reach before the reaper
	// may auto-recover it (DefaultQuarantineGrace when zero).
	QuarantineGrace time.Duration
}

// ActorKind names who sent a write.
type ActorKind string

// The actors of a lock.
const (
	// ActorJob is one attempt of one workflow job: its acquire (or
	// acquire-with-cleanup), release and post step.
	ActorJob ActorKind = "job"
	// ActorOldClient is a previous-generation client (schemas up to 5).
	ActorOldClient ActorKind = "old"
	// ActorReaper is the scheduled reaper.
	ActorReaper ActorKind = "reaper"
	// ActorRecover is operator recovery of the quarantine named by Target
	// (the reaper workflow's operation=recover).
	ActorRecover ActorKind = "recover"
	// ActorRecoverIncident is operator recovery of the incident named by
	// Target (operation=recover-incident).
	ActorRecoverIncident ActorKind = "recover-incident"
)

// Actor is the process a write or an outcome belongs to.
type Actor struct {
	Kind ActorKind
	// HolderID, Attempt and RunnerName identify a job (ActorJob,
	// ActorOldClient): the computed holder id, GITHUB_RUN_ATTEMPT and the
	// runner's own RUNNER_NAME.
	HolderID, Attempt, RunnerName string
	// Target is the reservation id (ActorRecover) or incident id
	// (ActorRecoverIncident) the operator named.
	Target string
}

// String names the actor in messages.
func (a Actor) String() string {
	switch a.Kind {
	case ActorJob, ActorOldClient:
		return fmt.Sprintf("%s:%s@%s#%s", a.Kind, a.HolderID, a.Attempt, a.RunnerName)
	case ActorRecover, ActorRecoverIncident:
		return fmt.Sprintf("%s(%s)", a.Kind, a.Target)
	}
	return string(a.Kind)
}

// OperatorActor is the identity of a run of the reaper workflow's
// operation input: "recover" of reservationID, "recover-incident" of
// incidentID, anything else the scheduled reaper.
func OperatorActor(operation, reservationID, incidentID string) Actor {
	switch ActorKind(operation) {
	case ActorRecover:
		return Actor{Kind: ActorRecover, Target: reservationID}
	case ActorRecoverIncident:
		return Actor{Kind: ActorRecoverIncident, Target: incidentID}
	}
	return Actor{Kind: ActorReaper}
}

func (a Actor) isJob() bool { return a.Kind == ActorJob || a.Kind == ActorOldClient }

// Violation is one broken rule, with a stable code.
type Violation struct {
	// Code is the stable reason code (the Code* constants).
	Code string
	// Detail explains it; values from the state are escaped.
	Detail string
}

func (v Violation) String() string { return v.Code + ": " + v.Detail }

// Reason codes of the model's rules and of the check.
const (
	CodeUndecodable           = "state-undecodable"
	CodeSchemaDowngrade       = "schema-downgrade"
	CodeSchemaSkip            = "schema-skip"
	CodeMigration             = "migration-unauthorized"
	CodeOldClientSchema       = "old-client-wrote-schema-6"
	CodeOverAdmission         = "over-admission"
	CodeDuplicate             = "duplicate-identity"
	CodeAdmissionUnauthorized = "admission-unauthorized"
	CodeAdmissionIncident     = "admission-during-incident"
	CodeJoinUnauthorized      = "join-unauthorized"
	CodeFIFOSameRunner        = "fifo-same-runner"
	CodeFIFOPassed            = "fifo-admissible-waiter-passed"
	CodeQueueOrder            = "fifo-queue-reordered"
	CodeOvertakeBarrier       = "overtake-barrier-passed"
	CodeOvertakeCount         = "overtake-count"
	CodeFencing               = "fencing-token"
	CodeRemovalUnauthorized   = "removal-unauthorized"
	CodeReservation           = "reservation-unauthorized"
	CodeIncident              = "incident-unauthorized"
	CodeClaimAcquired         = "claim-acquired"
	CodeClaimReleased         = "claim-released"
	CodeClaimRecovered        = "claim-recovered"
	CodeNotLinearizable       = "not-linearizable"
	CodeCheckTimeout          = "check-timeout"
)

// Evidence is what GitHub Actions had made true when a write reached the
// lock: which run attempts were terminal or superseded by a rerun, and which
// jobs had completed.
type Evidence interface {
	// RunFinished reports whether attempt attempt of run runID was terminal,
	// or superseded by a later attempt.
	RunFinished(runID, attempt string) bool
	// JobCompleted reports whether job jobID had completed.
	JobCompleted(jobID string) bool
}

// Step is one applied write to judge: the state before (nil for an absent
// file), the state after, who sent it and when it was answered.
type Step struct {
	Prev, Next *lockstate.State
	Actor      Actor
	// At bounds the moment the write applied from above (the wall time its
	// answer came back, or the request ended): a lease or a grace counts as
	// elapsed only before it.
	At time.Time
	// Evidence is what Actions had made true by then (nil: nothing).
	Evidence Evidence
}

type noEvidence struct{}

func (noEvidence) RunFinished(string, string) bool { return false }
func (noEvidence) JobCompleted(string) bool        { return false }

// esc escapes a value from the state or a workflow for a message (the
// project's one escaping path, actionio.EscapeData).
func esc(s string) string { return actionio.EscapeData(s) }

// identity of a holder admission: a holder whose attempt or token changed
// is a removal and a new admission.
type admissionKey struct {
	holderID, attempt string
	token             int64
}

func keyOf(h lockstate.Holder) admissionKey {
	return admissionKey{h.HolderID, h.RunAttempt, h.FencingToken}
}

// Judge returns every rule of the semaphore that step breaks (none: the
// step is legal). It is pure.
func (r LockRules) Judge(st Step) []Violation {
	j := &judge{r: r, st: st, prev: st.Prev, next: st.Next}
	if j.prev == nil {
		j.prev = lockstate.Empty(r.Lock)
	}
	if j.st.Evidence == nil {
		j.st.Evidence = noEvidence{}
	}
	if r.QuarantineGrace <= 0 {
		j.r.QuarantineGrace = DefaultQuarantineGrace
	}
	j.index()
	j.schema()
	j.occupancy()
	j.duplicates()
	j.admissions()
	j.machines()
	j.order()
	j.joins()
	j.removals()
	j.reservations()
	j.incident()
	j.fencing()
	return j.out
}

type judge struct {
	r          LockRules
	st         Step
	prev, next *lockstate.State
	out        []Violation

	prevHolders, nextHolders map[string]lockstate.Holder
	prevQueue, nextQueue     map[string]int // holderId -> first index
	admitted                 []lockstate.Holder
	admittedID               map[string]bool
	removedHolders           []lockstate.Holder
	// ownRemoved: the actor removed a holder of its own in this write.
	ownRemoved bool
}

func (j *judge) add(code, format string, args ...any) {
	j.out = append(j.out, Violation{Code: code, Detail: fmt.Sprintf(format, args...)})
}

func schemaOf(s *lockstate.State) int { return max(s.SchemaVersion, 2) }

func occupancy(s *lockstate.State) int { return len(s.Holders) + len(s.Reservations) }

func (j *judge) index() {
	j.prevHolders, j.nextHolders = holderIndex(j.prev), holderIndex(j.next)
	j.prevQueue, j.nextQueue = queueIndex(j.prev), queueIndex(j.next)
	j.admittedID = map[string]bool{}
	prevKeys := map[admissionKey]bool{}
	for _, h := range j.prev.Holders {
		prevKeys[keyOf(h)] = true
	}
	nextKeys := map[admissionKey]bool{}
	for _, h := range j.next.Holders {
		nextKeys[keyOf(h)] = true
		if !prevKeys[keyOf(h)] {
			j.admitted = append(j.admitted, h)
			j.admittedID[h.HolderID] = true
		}
	}
	for _, h := range j.prev.Holders {
		if !nextKeys[keyOf(h)] {
			j.removedHolders = append(j.removedHolders, h)
			if ok, _ := j.jobOwns(h.Entry); ok {
				j.ownRemoved = true
			}
		}
	}
}

func holderIndex(s *lockstate.State) map[string]lockstate.Holder {
	m := make(map[string]lockstate.Holder, len(s.Holders))
	for _, h := range s.Holders {
		m[h.HolderID] = h
	}
	return m
}

func queueIndex(s *lockstate.State) map[string]int {
	m := make(map[string]int, len(s.Queue))
	for i, e := range s.Queue {
		if _, dup := m[e.HolderID]; !dup {
			m[e.HolderID] = i
		}
	}
	return m
}

// schema: no downgrade; an upgrade is written only by a job (its acquire
// or its release), straight to its target schema, and only when the lock
// had nothing left to drain (docs/state-schema.md §10): no holder of the
// previous version survives the write (its own release may remove the
// last), no reservation is left or created when a schema-4+ lock steps to
// 5 or 6, no incident is active; waiters are carried across (order() checks
// their order). A previous-generation client keeps the reference's rule:
// one step at a time, on a lock with no holders and no queue, never to 6.
func (j *judge) schema() {
	ps, ns := schemaOf(j.prev), schemaOf(j.next)
	old := j.st.Actor.Kind == ActorOldClient
	switch {
	case ns < ps:
		j.add(CodeSchemaDowngrade, "schema %d -> %d", ps, ns)
	case ns == ps:
	case !j.st.Actor.isJob():
		j.add(CodeMigration, "schema %d -> %d written by %s (only a job's acquire or release upgrades)", ps, ns, esc(j.st.Actor.String()))
	case old && ns > ps+1:
		j.add(CodeSchemaSkip, "schema %d -> %d in one write by a previous-generation client (one step per write)", ps, ns)
	case old && (len(j.prev.Holders) > 0 || len(j.prev.Queue) > 0):
		j.add(CodeMigration, "schema %d -> %d by a previous-generation client on a lock that was not drained (%d holders, %d queued)", ps, ns, len(j.prev.Holders), len(j.prev.Queue))
	default:
		for _, h := range j.prev.Holders {
			if n, ok := j.nextHolders[h.HolderID]; ok && n.RunAttempt == h.RunAttempt {
				j.add(CodeMigration, "schema %d -> %d while holder %s, admitted under the old rules, still holds", ps, ns, esc(h.HolderID))
			}
		}
		if ps >= 4 && ns >= 5 {
			next := reservationIndex(j.next)
			for _, r := range j.prev.Reservations {
				if _, kept := next[r.ReservationID]; kept || r.State != lockstate.ReservationCooldown {
					j.add(CodeMigration, "schema %d -> %d with reservation %s left", ps, ns, esc(r.ReservationID))
				}
			}
			if len(j.next.Reservations) > 0 {
				j.add(CodeMigration, "schema %d -> %d with %d reservation(s) in the upgraded version", ps, ns, len(j.next.Reservations))
			}
		}
		if ps == 5 && j.prev.ActiveIncident != nil {
			j.add(CodeMigration, "schema 5 -> %d while incident %s is active", ns, esc(j.prev.ActiveIncident.IncidentID))
		}
	}
	if old && ns > 5 {
		j.add(CodeOldClientSchema, "%s wrote schema %d", esc(j.st.Actor.String()), ns)
	}
}

// occupancy (R-S1): holders + reservations never exceed maxHolders; a write
// over the limit may only lower it (maxHolders lowered below occupancy).
func (j *judge) occupancy() {
	pn, nn := occupancy(j.prev), occupancy(j.next)
	if j.r.MaxHolders > 0 && nn > j.r.MaxHolders && nn > pn {
		j.add(CodeOverAdmission, "%d holders + %d reservations exceed maxHolders %d", len(j.next.Holders), len(j.next.Reservations), j.r.MaxHolders)
	}
}

// duplicates: one holderId is never both a holder and queued.
func (j *judge) duplicates() {
	for _, e := range j.next.Queue {
		if _, held := j.nextHolders[e.HolderID]; held {
			j.add(CodeDuplicate, "%s is a holder and queued", esc(e.HolderID))
		}
	}
}

// jobOwns: the actor is a job that owns entry e (spec §2.5): same holderId;
// from schema 3 its attempt is at least the entry's; an entry of the same
// attempt recorded on another runner belongs to another job.
func (j *judge) jobOwns(e lockstate.Entry) (bool, string) {
	a := j.st.Actor
	if !a.isJob() {
		return false, "not a job"
	}
	if e.HolderID != a.HolderID {
		return false, "removed by another job " + esc(a.String())
	}
	if schemaOf(j.next) >= 3 && !attemptAtLeast(a.Attempt, e.RunAttempt) {
		return false, fmt.Sprintf("stale attempt %s removed attempt %s (run-attempt fence)", esc(a.Attempt), esc(e.RunAttempt))
	}
	if e.RunnerName != "" && a.RunnerName != "" && e.RunnerName != a.RunnerName && a.Attempt == e.RunAttempt {
		return false, fmt.Sprintf("a job on runner %s removed the entry of another job sharing its holder id, on runner %s", esc(a.RunnerName), esc(e.RunnerName))
	}
	return true, ""
}

// attemptAtLeast compares canonical decimal run attempts; anything else is
// not at least.
func attemptAtLeast(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x >= y
}
