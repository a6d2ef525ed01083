package linearizability

import (
	"fmt"
	"strconv"
	"strings"
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

// admissions checks every new holder: who admitted it, the incident latch,
// seats, FIFO with runner serialization and the overtaking bound.
func (j *judge) admissions() {
	a := j.st.Actor
	ps, ns := schemaOf(j.prev), schemaOf(j.next)
	free := j.r.MaxHolders - occupancy(j.next)
	for _, e := range j.admitted {
		self := a.isJob() && e.HolderID == a.HolderID && e.RunAttempt == a.Attempt &&
			(e.RunnerName == "" || a.RunnerName == "" || e.RunnerName == a.RunnerName)
		_, wasQueued := j.prevQueue[e.HolderID]
		// Direct handoff (schema <= 3): a release that freed its own seat
		// admits waiters in the same write.
		handoff := a.Kind == ActorJob && ps <= lockstate.HandoffMaxSchema && j.ownRemoved && wasQueued
		if !self && !handoff {
			j.add(CodeAdmissionUnauthorized, "%s@%s admitted by %s", esc(e.HolderID), esc(e.RunAttempt), esc(a.String()))
		}
		if (ps >= 5 && j.prev.ActiveIncident != nil) || (ns >= 5 && j.next.ActiveIncident != nil) {
			j.add(CodeAdmissionIncident, "%s admitted while an account incident is active", esc(e.HolderID))
		}
		if j.r.MaxHolders > 0 && free < 0 {
			j.add(CodeOverAdmission, "%s admitted into a full lock (%d holders + %d reservations, maxHolders %d)", esc(e.HolderID), len(j.next.Holders), len(j.next.Reservations), j.r.MaxHolders)
		}
		if j.reclaimed(e) {
			j.reclaimOrder(e)
			continue
		}
		j.fifo(e, free)
	}
	j.overtakes()
}

// reclaimed: e's admission consumed its runner's quarantine (spec §2.6).
func (j *judge) reclaimed(e lockstate.Holder) bool {
	if schemaOf(j.prev) < 4 || e.RunnerID == "" {
		return false
	}
	next := reservationIndex(j.next)
	for _, r := range j.prev.Reservations {
		if r.State == lockstate.ReservationQuarantine && r.RunnerID == e.RunnerID {
			if _, kept := next[r.ReservationID]; !kept {
				return true
			}
		}
	}
	return false
}

// reclaimOrder: a reclaim is made by the first queued entry of the runner.
func (j *judge) reclaimOrder(e lockstate.Holder) {
	for _, w := range j.prev.Queue {
		if w.RunnerID == e.RunnerID {
			if w.HolderID != e.HolderID {
				j.add(CodeFIFOSameRunner, "%s reclaimed runner %s's quarantine ahead of earlier waiter %s", esc(e.HolderID), esc(e.RunnerID), esc(w.HolderID))
			}
			return
		}
	}
}

// scanClass is what the admission scan made of an earlier waiter.
type scanClass int

const (
	scanAdmissible scanClass = iota // could have been admitted instead (co-selected)
	scanBlocked                     // its runner was busy: passing it is an overtake
	scanReclaim                     // reclaim-eligible: waits for its own poll, not a seat
	scanGone                        // not a waiter any more after this write
)

// scan classifies the waiters ahead of position qi of the previous queue as
// the admission scan does (docs/state-schema.md §8.2), on the occupancy of
// the next state without the holders this write admitted.
func (j *judge) scan(qi int) []scanClass {
	serialized := schemaOf(j.next) >= 3
	occupied := map[string]bool{}
	quarantined := map[string]bool{}
	for _, h := range j.next.Holders {
		if !j.admittedID[h.HolderID] {
			occupied[h.RunnerID] = true
		}
	}
	for _, r := range j.next.Reservations {
		occupied[r.RunnerID] = true
		if r.State == lockstate.ReservationQuarantine {
			quarantined[r.RunnerID] = true
		}
	}
	canReclaim := schemaOf(j.next) >= 4 && j.r.MaxHolders-(occupancy(j.next)-len(j.admitted)) >= 0
	seen := map[string]bool{}
	out := make([]scanClass, qi)
	for i, w := range j.prev.Queue[:qi] {
		first := !seen[w.RunnerID]
		seen[w.RunnerID] = true
		_, still := j.nextQueue[w.HolderID]
		switch {
		case j.admittedID[w.HolderID]:
			out[i] = scanGone
			occupied[w.RunnerID] = true
		case !still:
			out[i] = scanGone
		case !serialized:
			out[i] = scanAdmissible
		case canReclaim && first && quarantined[w.RunnerID]:
			out[i] = scanReclaim
		case occupied[w.RunnerID]:
			out[i] = scanBlocked
		default:
			out[i] = scanAdmissible
			occupied[w.RunnerID] = true
		}
	}
	return out
}

// position is where e stood in the previous queue (joined and admitted in
// one write: behind everyone).
func (j *judge) position(holderID string) int {
	if qi, ok := j.prevQueue[holderID]; ok {
		return qi
	}
	return len(j.prev.Queue)
}

// fifo (R-S7): an admission never passes an earlier waiter on its own runner,
// and passes admissible earlier waiters only within the seats still free.
func (j *judge) fifo(e lockstate.Holder, free int) {
	qi := j.position(e.HolderID)
	cls := j.scan(qi)
	admissible := 0
	for i, w := range j.prev.Queue[:qi] {
		if cls[i] == scanGone {
			continue
		}
		if schemaOf(j.next) >= 3 && w.RunnerID == e.RunnerID {
			j.add(CodeFIFOSameRunner, "%s admitted ahead of earlier waiter %s on the same runner %s", esc(e.HolderID), esc(w.HolderID), esc(w.RunnerID))
		}
		if cls[i] == scanAdmissible {
			admissible++
		}
	}
	if j.r.MaxHolders > 0 && admissible > max(free, 0) {
		j.add(CodeFIFOPassed, "%s admitted ahead of %d admissible earlier waiter(s) with only %d seat(s) left", esc(e.HolderID), admissible, max(free, 0))
	}
}

// overtakes (schema 6, R-S7): a waiter's overtakes count rises by exactly
// the admissions that passed it while it was blocked, never past a barrier
// (a blocked waiter already at maxOvertakes), and never changes otherwise; a
// new entry starts at 0 (a rerun refreshing its entry keeps the count).
func (j *judge) overtakes() {
	if schemaOf(j.prev) < lockstate.FencedSchemaVersion || schemaOf(j.next) < lockstate.FencedSchemaVersion {
		return
	}
	passed := map[string]int{}
	for _, e := range j.admitted {
		if j.reclaimed(e) {
			continue
		}
		qi := j.position(e.HolderID)
		for i, c := range j.scan(qi) {
			if c != scanBlocked {
				continue
			}
			w := j.prev.Queue[i]
			passed[w.HolderID]++
			if w.Overtakes >= j.r.MaxOvertakes {
				j.add(CodeOvertakeBarrier, "%s admitted past %s, which was blocked with overtakes %d >= maxOvertakes %d (a barrier)", esc(e.HolderID), esc(w.HolderID), w.Overtakes, j.r.MaxOvertakes)
			}
		}
	}
	for _, n := range j.next.Queue {
		pi, was := j.prevQueue[n.HolderID]
		want := 0
		if was {
			want = j.prev.Queue[pi].Overtakes + passed[n.HolderID]
		}
		if n.Overtakes != want {
			j.add(CodeOvertakeCount, "queue entry %s has overtakes %d, want %d", esc(n.HolderID), n.Overtakes, want)
		}
	}
}

// order: the waiters that stay keep their relative order (a join may be
// inserted among them by arrival, but nobody moves past another).
func (j *judge) order() {
	var before, after []string
	for i, e := range j.prev.Queue {
		if _, still := j.nextQueue[e.HolderID]; still && j.prevQueue[e.HolderID] == i {
			before = append(before, e.HolderID)
		}
	}
	for i, e := range j.next.Queue {
		if _, was := j.prevQueue[e.HolderID]; was && j.nextQueue[e.HolderID] == i {
			after = append(after, e.HolderID)
		}
	}
	for k := range after {
		if after[k] != before[k] {
			j.add(CodeQueueOrder, "%s moved ahead of %s in the queue", esc(after[k]), esc(before[k]))
			return
		}
	}
}

// joins: a queue entry is added (or refreshed to another attempt) only by
// its own job, and never while an incident is active.
func (j *judge) joins() {
	a := j.st.Actor
	for _, n := range j.next.Queue {
		pi, was := j.prevQueue[n.HolderID]
		if was && j.prev.Queue[pi].RunAttempt == n.RunAttempt {
			continue
		}
		if !a.isJob() || n.HolderID != a.HolderID || n.RunAttempt != a.Attempt {
			j.add(CodeJoinUnauthorized, "%s@%s queued by %s", esc(n.HolderID), esc(n.RunAttempt), esc(a.String()))
		}
		if schemaOf(j.prev) >= 5 && j.prev.ActiveIncident != nil {
			j.add(CodeJoinUnauthorized, "%s queued while incident %s is active", esc(n.HolderID), esc(j.prev.ActiveIncident.IncidentID))
		}
	}
}

// removals (R-S3, R-S4): every holder or waiter that left without being
// admitted was removed by someone entitled to it.
func (j *judge) removals() {
	for _, h := range j.removedHolders {
		if why := j.mayRemove(h.Entry, &h); why != "" {
			j.add(CodeRemovalUnauthorized, "holder %s@%s removed by %s: %s", esc(h.HolderID), esc(h.RunAttempt), esc(j.st.Actor.String()), why)
		}
	}
	for _, e := range j.prev.Queue {
		if h, ok := j.admittedHolder(e.HolderID); ok && (schemaOf(j.next) < 3 || attemptAtLeast(h.RunAttempt, e.RunAttempt)) {
			continue // admitted (an older attempt's entry is taken over by its rerun)
		}
		if ni, still := j.nextQueue[e.HolderID]; still && attemptAtLeast(j.next.Queue[ni].RunAttempt, e.RunAttempt) {
			continue // kept, or refreshed by a newer attempt (judged as a join)
		}
		if why := j.mayRemove(e, nil); why != "" {
			j.add(CodeRemovalUnauthorized, "queue entry %s@%s removed by %s: %s", esc(e.HolderID), esc(e.RunAttempt), esc(j.st.Actor.String()), why)
		}
	}
}

func (j *judge) admittedHolder(holderID string) (lockstate.Holder, bool) {
	for _, h := range j.admitted {
		if h.HolderID == holderID {
			return h, true
		}
	}
	return lockstate.Holder{}, false
}

// mayRemove returns why the actor may not remove e ("" when it may); h is
// the holder when e was admitted.
func (j *judge) mayRemove(e lockstate.Entry, h *lockstate.Holder) string {
	a := j.st.Actor
	switch a.Kind {
	case ActorJob, ActorOldClient:
		_, why := j.jobOwns(e)
		return why
	case ActorReaper:
		finished := j.st.Evidence.RunFinished(e.RunID, e.RunAttempt) || (e.JobID != "" && j.st.Evidence.JobCompleted(e.JobID))
		if h == nil {
			if finished {
				return ""
			}
			return "its run attempt was neither terminal nor superseded and its job had not completed"
		}
		q := j.reapQuarantine(*h)
		if schemaOf(j.next) >= 4 && q == nil {
			return "the reaper freed a holder without quarantining it"
		}
		if finished || leaseExpired(h.ExpiresAt, j.st.At) {
			return ""
		}
		return "its run and job were still active and its lease had not expired"
	}
	return string(a.Kind) + " never removes holders or waiters"
}

// reapQuarantine is the quarantine the reaper made of h in this write.
func (j *judge) reapQuarantine(h lockstate.Holder) *lockstate.Reservation {
	prev := reservationIndex(j.prev)
	for _, r := range j.next.Reservations {
		if _, old := prev[r.ReservationID]; old {
			continue
		}
		if r.HolderID == h.HolderID && r.RunAttempt == h.RunAttempt && r.RunnerID == h.RunnerID &&
			r.State == lockstate.ReservationQuarantine && strings.HasPrefix(r.Reason, lockstate.ReasonReapPrefix) {
			rr := r
			return &rr
		}
	}
	return nil
}

func leaseExpired(expiresAt string, at time.Time) bool {
	exp, ok := lockstate.ParseTime(expiresAt)
	return ok && !at.IsZero() && exp.Before(at)
}

func reservationIndex(s *lockstate.State) map[string]lockstate.Reservation {
	m := make(map[string]lockstate.Reservation, len(s.Reservations))
	for _, r := range s.Reservations {
		m[r.ReservationID] = r
	}
	return m
}

// reservations: a reservation is created only from a holder removed in the
// same write (its job's release or post step, the reaper) or by incident
// recovery; a quarantine ends only by a same-runner reclaim, the reaper's
// auto-recovery of a finished run after the grace, or recovery of exactly
// the reservation the operator named. Cooldowns may be pruned by anyone.
func (j *judge) reservations() {
	a := j.st.Actor
	prev, next := reservationIndex(j.prev), reservationIndex(j.next)
	for _, n := range j.next.Reservations {
		p, old := prev[n.ReservationID]
		switch {
		case !old:
			if why := j.mayCreate(n); why != "" {
				j.add(CodeReservation, "reservation %s (%s %s, runner %s) created by %s: %s", esc(n.ReservationID), n.State, esc(n.HolderID), esc(n.RunnerID), esc(a.String()), why)
			}
		case p.State == lockstate.ReservationCooldown && n.State == lockstate.ReservationQuarantine:
			j.add(CodeReservation, "cooldown %s turned back into a quarantine by %s", esc(n.ReservationID), esc(a.String()))
		}
	}
	for _, p := range j.prev.Reservations {
		if p.State != lockstate.ReservationQuarantine {
			continue
		}
		if n, ok := next[p.ReservationID]; ok && n.State == lockstate.ReservationQuarantine {
			continue
		}
		if why := j.mayEndQuarantine(p, next); why != "" {
			j.add(CodeReservation, "quarantine %s of %s (runner %s) ended by %s: %s", esc(p.ReservationID), esc(p.HolderID), esc(p.RunnerID), esc(a.String()), why)
		}
	}
}

func (j *judge) mayCreate(n lockstate.Reservation) string {
	a := j.st.Actor
	switch a.Kind {
	case ActorJob, ActorOldClient:
		for _, h := range j.removedHolders {
			if ok, _ := j.jobOwns(h.Entry); ok && h.RunnerID == n.RunnerID {
				return ""
			}
		}
		return "no holder of this job on that runner left in the same write"
	case ActorReaper:
		for _, h := range j.removedHolders {
			if q := j.reapQuarantine(h); q != nil && q.ReservationID == n.ReservationID {
				return ""
			}
		}
		return "not the quarantine of a holder the reaper removed"
	case ActorRecoverIncident:
		inc := j.prev.ActiveIncident
		if inc != nil && inc.IncidentID == a.Target && n.State == lockstate.ReservationCooldown && n.RunnerID == strings.TrimSpace(inc.RunnerID) {
			return ""
		}
		return "not the recovery cooldown of the named incident's runner"
	}
	return string(a.Kind) + " creates no reservations"
}

func (j *judge) mayEndQuarantine(q lockstate.Reservation, next map[string]lockstate.Reservation) string {
	a := j.st.Actor
	if _, kept := next[q.ReservationID]; !kept {
		for _, h := range j.admitted {
			if h.RunnerID == q.RunnerID {
				return "" // consumed by a same-runner reclaim (judged as an admission)
			}
		}
	}
	switch a.Kind {
	case ActorRecover:
		if q.ReservationID == a.Target {
			return ""
		}
		return "the operator named " + esc(a.Target)
	case ActorReaper:
		created, ok := lockstate.ParseTime(q.CreatedAt)
		switch {
		case schemaOf(j.next) < 5:
			return "auto-recovery needs schema 5"
		case j.prev.ActiveIncident != nil:
			return "auto-recovery while an incident is active"
		case !ok || j.st.At.IsZero() || created.Add(j.r.QuarantineGrace).After(j.st.At):
			return fmt.Sprintf("auto-recovered before the %s grace", j.r.QuarantineGrace)
		case !j.st.Evidence.RunFinished(q.RunID, q.RunAttempt):
			return "its owning run was still active (time alone is no proof)"
		}
		return ""
	}
	return string(a.Kind) + " never ends a quarantine except by its own reclaim"
}

// incident (R-S8): an incident is raised only by a job's blocked release for
// its own run, cleared only by recovery naming it, and never replaced.
func (j *judge) incident() {
	a := j.st.Actor
	var pi, ni *lockstate.Incident
	if schemaOf(j.prev) >= 5 {
		pi = j.prev.ActiveIncident
	}
	if schemaOf(j.next) >= 5 {
		ni = j.next.ActiveIncident
	}
	switch {
	case pi == nil && ni != nil:
		if !a.isJob() || !strings.HasPrefix(a.HolderID, ni.Repository+":"+ni.RunID+":"+ni.Job+":") {
			j.add(CodeIncident, "incident %s raised by %s", esc(ni.IncidentID), esc(a.String()))
		}
	case pi != nil && ni == nil:
		if a.Kind != ActorRecoverIncident || a.Target != pi.IncidentID {
			j.add(CodeIncident, "incident %s cleared by %s", esc(pi.IncidentID), esc(a.String()))
		}
	case pi != nil && ni != nil && pi.IncidentID != ni.IncidentID:
		j.add(CodeIncident, "incident %s replaced by %s", esc(pi.IncidentID), esc(ni.IncidentID))
	}
}

// fencing (R-S5): at schema 6 the counter rises by exactly the admissions
// of the write (it starts at 0 on the migration), and each new holder gets a
// distinct token above the previous counter.
func (j *judge) fencing() {
	if schemaOf(j.next) < lockstate.FencedSchemaVersion {
		return
	}
	base := int64(0)
	if schemaOf(j.prev) >= lockstate.FencedSchemaVersion {
		base = j.prev.FencingToken
	}
	if want := base + int64(len(j.admitted)); j.next.FencingToken != want {
		j.add(CodeFencing, "counter %d -> %d with %d admission(s) (want %d)", base, j.next.FencingToken, len(j.admitted), want)
	}
	seen := map[int64]bool{}
	for _, h := range j.admitted {
		if h.FencingToken <= base || h.FencingToken > j.next.FencingToken || seen[h.FencingToken] {
			j.add(CodeFencing, "%s admitted with token %d (previous counter %d, new counter %d)", esc(h.HolderID), h.FencingToken, base, j.next.FencingToken)
		}
		seen[h.FencingToken] = true
	}
}
