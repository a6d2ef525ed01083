package lockstate

import (
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/plant"
)

// Identity is a caller's run identity (spec §2.5). HolderID excludes the run
// attempt, so a rerun shares it; RunAttempt fences reruns instead. RunnerID is
// trimmed when used. JobID is "" or a canonical positive decimal. QueuedAt is
// when this acquire invocation started; zero means the transition's now.
type Identity struct {
	HolderID   string
	Repository string
	Workflow   string
	Job        string
	RunID      string
	RunAttempt string
	RunURL     string
	RunnerID   string
	JobID      string
	// RunnerName, RunnerOS and RunnerArch are the runner this process runs
	// on (RUNNER_NAME, RUNNER_OS, RUNNER_ARCH; "" when unknown). They are
	// recorded on the caller's entries at every schema and decide whether a
	// same-attempt claim of an existing holderId is this job's retry or a
	// second job (CodeHolderIDCollision).
	RunnerName string
	RunnerOS   string
	RunnerArch string
	// MachineID (issue 26) is this runner's machine id for the lock
	// repository (32 lowercase hex digits, internal/machineid), recorded on
	// the caller's entries when set; "" when the config does not ask for
	// it. An acquire on a lock with serializeBy "machine" needs it.
	MachineID string
	QueuedAt  time.Time
}

func (id Identity) validate(verb string) error {
	if id.HolderID == "" {
		return newError(CodeInvalidIdentity, verb+": holder-id is empty")
	}
	if !validUTF8(id.HolderID, id.Repository, id.Workflow, id.Job, id.RunID, id.RunAttempt, id.RunURL, id.RunnerID, id.JobID) {
		return newError(CodeInvalidIdentity, verb+": identity is not valid UTF-8")
	}
	if id.JobID != "" && !isCanonicalPositiveDecimal(id.JobID) {
		return newError(CodeInvalidIdentity, fmt.Sprintf("%s: job ID %q is not a canonical positive decimal", verb, id.JobID))
	}
	for _, f := range [...]struct {
		name, value string
		max         int
	}{{"runner name", id.RunnerName, MaxRunnerNameBytes}, {"runner OS", id.RunnerOS, MaxRunnerPlatformBytes}, {"runner architecture", id.RunnerArch, MaxRunnerPlatformBytes}} {
		if reason := runnerFieldProblem(f.value, f.max); f.value != "" && reason != "" {
			return newError(CodeInvalidRunnerIdentity, fmt.Sprintf("%s: the %s %s", verb, f.name, reason))
		}
	}
	return nil
}

// entry builds the queue entry this identity writes at schema.
func (id Identity) entry(schema int, now time.Time) Entry {
	queued := id.QueuedAt
	if queued.IsZero() {
		queued = now
	}
	e := Entry{
		HolderID:   id.HolderID,
		Repository: id.Repository,
		Workflow:   id.Workflow,
		Job:        id.Job,
		RunID:      id.RunID,
		RunAttempt: id.RunAttempt,
		RunURL:     id.RunURL,
		QueuedAt:   FormatTime(queued),
		JobID:      id.JobID,
		RunnerName: id.RunnerName,
		RunnerOS:   id.RunnerOS,
		RunnerArch: id.RunnerArch,
		MachineID:  id.MachineID,
	}
	if schema >= 3 {
		e.RunnerID = jsTrim(id.RunnerID)
	}
	return e
}

// fenceVerdict is the outcome of the admission-side run-attempt fence.
type fenceVerdict int

const (
	fenceSame fenceVerdict = iota
	fenceNewer
)

// admissionFence is the reference identityIsNewer (spec §2.5), applied only
// under runner serialization: a stale attempt, or the same attempt on another
// runner or with another job, is refused; a newer attempt is reported.
func admissionFence(stored Entry, id Identity, kind, lock string) (fenceVerdict, error) {
	if !isCanonicalPositiveDecimal(stored.RunAttempt) || !isCanonicalPositiveDecimal(id.RunAttempt) {
		return 0, newError(CodeInvalidRunAttempt, fmt.Sprintf(
			"fence %s %s on %s: run attempts %q (stored) and %q (caller) must be canonical positive decimals",
			kind, stored.HolderID, lock, stored.RunAttempt, id.RunAttempt))
	}
	switch c := compareDecimal(id.RunAttempt, stored.RunAttempt); {
	case c < 0:
		return 0, newError(CodeStaleRunAttempt, fmt.Sprintf(
			"fence %s %s on %s: already owned by newer run attempt %s; refusing stale attempt %s",
			kind, stored.HolderID, lock, stored.RunAttempt, id.RunAttempt))
	case c > 0:
		return fenceNewer, nil
	}
	if stored.RunnerID != jsTrim(id.RunnerID) {
		return 0, newError(CodeConflictingIdentity, fmt.Sprintf(
			"fence %s %s on %s: run attempt %s is recorded on runner %q, refusing conflicting identity on runner %q",
			kind, stored.HolderID, lock, stored.RunAttempt, stored.RunnerID, jsTrim(id.RunnerID)))
	}
	if err := jobConflict(stored, id, kind, lock); err != nil {
		return 0, err
	}
	return fenceSame, nil
}

// jobConflict refuses the same run attempt claiming stored from another
// physical job: a different recorded runner (CodeHolderIDCollision) or a
// different proven job id (CodeConflictingIdentity, the reference's rule).
// It applies on every schema: without it two matrix legs left at the
// default holder-id-suffix share one holderId and the second is taken for
// the first's retry, so two jobs use one seat. A field unknown on either
// side (an entry written by an older client, a run outside Actions) proves
// nothing and is not a conflict.
func jobConflict(stored Entry, id Identity, kind, lock string) error {
	if stored.RunnerName != "" && id.RunnerName != "" && stored.RunnerName != id.RunnerName {
		return newError(CodeHolderIDCollision, fmt.Sprintf(
			"claim %s %s on %s: run attempt %s already uses this holder id on runner %q, and this job runs on runner %q; two jobs cannot share one holder id (give each matrix leg a distinct holder-id-suffix, for example from its matrix values)",
			kind, stored.HolderID, lock, stored.RunAttempt, stored.RunnerName, id.RunnerName))
	}
	if stored.JobID != "" && id.JobID != "" && stored.JobID != id.JobID {
		return newError(CodeConflictingIdentity, fmt.Sprintf(
			"fence %s %s on %s: run attempt %s is recorded as job %s, refusing conflicting identity with job %s (two jobs cannot share one holder id: give each matrix leg a distinct holder-id-suffix)",
			kind, stored.HolderID, lock, stored.RunAttempt, stored.JobID, id.JobID))
	}
	return nil
}

// foreignRunner reports whether stored, of the caller's holderId and run
// attempt, is recorded on a different runner than the caller's: then it is
// another job's entry, which a cleanup by computed holderId must not remove.
func foreignRunner(stored Entry, attempt, runnerName string) bool {
	return runnerName != "" && stored.RunnerName != "" && stored.RunnerName != runnerName && stored.RunAttempt == attempt
}

// ownsEntry is the reference cleanupIdentity.ownsEntry (spec §2.5): same
// holderId; below schema 3 any attempt; from schema 3 the caller attempt must
// be >= the stored one. runnerId is deliberately not part of ownership, so a
// fallback job on another runner can clean up.
func ownsEntry(stored Entry, holderID, attempt string, schema int, lock string) (bool, error) {
	if stored.HolderID != holderID {
		return false, nil
	}
	if schema < 3 {
		return true, nil
	}
	if !isCanonicalPositiveDecimal(stored.RunAttempt) || !isCanonicalPositiveDecimal(attempt) {
		return false, newError(CodeInvalidRunAttempt, fmt.Sprintf(
			"clean up %s on %s: run attempts %q (stored) and %q (caller) must be canonical positive decimals",
			holderID, lock, stored.RunAttempt, attempt))
	}
	return compareDecimal(attempt, stored.RunAttempt) >= 0 || plant.Enabled(plant.DropAttemptFence), nil // planted bug (tests only)
}
