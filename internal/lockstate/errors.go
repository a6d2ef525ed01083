package lockstate

import "errors"

// Code is a stable, kebab-case reason code carried by every *Error this
// package returns. Callers switch on Codes (via errors.As), never on message
// text, and may surface them verbatim in action outputs.
type Code string

// Decode and validation codes (spec §2.2, §2.3). Each fail-closed rule of the
// reference normalizeState maps to exactly one of these.
const (
	// CodeInvalidJSON means the state document is not parseable JSON.
	CodeInvalidJSON Code = "invalid-json"
	// CodeNotObject is rule 1: the document is not a JSON object.
	CodeNotObject Code = "not-object"
	// CodeInvalidLockName means the caller asked for an empty lock name.
	CodeInvalidLockName Code = "invalid-lock-name"
	// CodeLockMismatch is rule 2: state.lock differs from the expected lock.
	CodeLockMismatch Code = "lock-mismatch"
	// CodeUnsupportedSchema is rule 3 for a schemaVersion that is not an integer >= 1.
	CodeUnsupportedSchema Code = "unsupported-schema"
	// CodeNewerSchema is rule 3 for an integer schemaVersion above MaxSchemaVersion:
	// the state was written by a newer client and this binary must be upgraded.
	CodeNewerSchema Code = "newer-schema-than-supported"
	// CodeInvalidQueue is rule 4: queue is present but not an array.
	CodeInvalidQueue Code = "invalid-queue"
	// CodeInvalidHolders is rule 5: schema >= 2 and holders is not an array.
	CodeInvalidHolders Code = "invalid-holders"
	// CodeMissingHolderMirror is rules 6 and 10: the legacy holder key is absent.
	CodeMissingHolderMirror Code = "missing-holder-mirror"
	// CodeInvalidReservations is rule 7: schema >= 4 and reservations is not an array.
	CodeInvalidReservations Code = "invalid-reservations"
	// CodeMissingActiveIncident is rule 8: schema 5 without an activeIncident key.
	CodeMissingActiveIncident Code = "missing-active-incident"
	// CodeInvalidReservation is rules 9 and 17: a malformed reservation.
	CodeInvalidReservation Code = "invalid-reservation"
	// CodeInvalidEntry is rule 11: a holder or queue entry without a holderId.
	CodeInvalidEntry Code = "invalid-entry"
	// CodeInvalidHolderMirror is rule 12: holder is neither null nor an object with a holderId.
	CodeInvalidHolderMirror Code = "invalid-holder-mirror"
	// CodeHolderMirrorMismatch is rule 13: holder differs from holders[0].
	CodeHolderMirrorMismatch Code = "holder-mirror-mismatch"
	// CodeDuplicateHolder is rule 14: two holders share a holderId.
	CodeDuplicateHolder Code = "duplicate-holder"
	// CodeMissingRunnerID is rule 15: schema >= 3 entry without a runnerId.
	CodeMissingRunnerID Code = "missing-runner-id"
	// CodeInvalidJobID is rule 16: a jobId key that is not a canonical positive decimal.
	CodeInvalidJobID Code = "invalid-job-id"
	// CodeInvalidIncident is rule 17: a malformed or inconsistent activeIncident.
	CodeInvalidIncident Code = "invalid-incident"
	// CodeRunnerConflict is rules 18 and 19: one runnerId occupies two slots
	// (two holders, two reservations, or a holder and a reservation).
	CodeRunnerConflict Code = "runner-conflict"
	// CodeDuplicateQueueEntry is rule 18: schema >= 3 queue repeats a holderId.
	CodeDuplicateQueueEntry Code = "duplicate-queue-entry"
	// CodeDuplicateReservation is rule 19: two reservations share a reservationId.
	CodeDuplicateReservation Code = "duplicate-reservation"
	// CodeQueueFull means an acquire would grow the queue past
	// MaxQueueEntries; nothing is written.
	CodeQueueFull Code = "queue-full"
	// CodeInvalidServerURL means GITHUB_SERVER_URL is not a bare http(s) origin.
	CodeInvalidServerURL Code = "invalid-server-url"
	// CodeInvalidState is an in-memory State that no reference client could
	// have written (for example reservations below schema 4); Encode refuses it.
	CodeInvalidState Code = "invalid-state"
	// CodeInvalidFencingToken is rules 20 and 21 (schema 6): the top-level
	// fencingToken is missing or not an integer in 0..MaxFencingToken, or a
	// holder's is missing or not an integer in 1..MaxFencingToken.
	CodeInvalidFencingToken Code = "invalid-fencing-token"
	// CodeFencingTokenAhead is rule 22 (schema 6): a holder carries a token
	// larger than the top-level counter, so the counter went backwards.
	CodeFencingTokenAhead Code = "fencing-token-ahead-of-counter"
	// CodeDuplicateFencingToken is rule 22 (schema 6): two holders share a token.
	CodeDuplicateFencingToken Code = "duplicate-fencing-token"
	// CodeInvalidRecentArrivals is a recentArrivals log (arrivals.go) that
	// is not an array of at most MaxRecentArrivals objects with a canonical
	// at, a positive window and a non-negative count.
	CodeInvalidRecentArrivals Code = "invalid-recent-arrivals"
	// CodeInvalidRecentHolds is a recentHolds log (holds.go) that is not an
	// array of at most MaxRecentHolds objects with a canonical at and a
	// positive heldMs of at most a week.
	CodeInvalidRecentHolds Code = "invalid-recent-holds"
	// CodeInvalidOvertakes is rule 23 (schema 6): a queue entry's overtakes is
	// missing or not an integer in 0..MaxFencingToken.
	CodeInvalidOvertakes Code = "invalid-overtakes"
	// CodeInvalidUTF8 is a document whose bytes are not valid UTF-8. Decoding
	// would replace them with U+FFFD and so rewrite another client's
	// identity; the document is refused before any write.
	CodeInvalidUTF8 Code = "invalid-utf8"
	// CodeLoneSurrogate is a \u escape of a lone UTF-16 surrogate, which Go
	// cannot represent (it would become U+FFFD) and the JavaScript reference
	// writes back unchanged; refused like invalid UTF-8.
	CodeLoneSurrogate Code = "lone-surrogate"
	// CodeDuplicateKey is an object that repeats a key. encoding/json keeps
	// the last value and JavaScript's JSON.parse does too, but no correct
	// writer produces one, so it is refused rather than guessed.
	CodeDuplicateKey Code = "duplicate-key"
	// CodeInvalidTimestamp is a queuedAt, acquiredAt, expiresAt, createdAt,
	// availableAt or reportedAt that is not the canonical
	// Date.prototype.toISOString form every client writes
	// (YYYY-MM-DDTHH:mm:ss.sssZ, a real calendar time).
	CodeInvalidTimestamp Code = "invalid-timestamp"
	// CodeInvalidRunnerIdentity is a recorded runnerName, runnerOs or
	// runnerArch that is not a string of printable characters within its
	// length bound.
	CodeInvalidRunnerIdentity Code = "invalid-runner-identity"
)

// Transition refusal codes (spec §2.4, §2.5, §2.6, §3.5, §3.7, §4.3, §4.4).
const (
	// CodeInvalidIdentity means the caller identity lacks a required field.
	CodeInvalidIdentity Code = "invalid-identity"
	// CodeInvalidLease means the requested lease is not positive.
	CodeInvalidLease Code = "invalid-lease"
	// CodeInvalidConfig means a Config outside the ranges DecodeConfig produces.
	CodeInvalidConfig Code = "invalid-config"
	// CodeRunnerIDRequired means runner serialization is effective and the caller has no runner-id.
	CodeRunnerIDRequired Code = "runner-id-required"
	// CodeInvalidRunAttempt means a run attempt that must be fenced is not a canonical positive decimal.
	CodeInvalidRunAttempt Code = "invalid-run-attempt"
	// CodeStaleRunAttempt means a newer run attempt already owns the caller's holderId.
	CodeStaleRunAttempt Code = "stale-run-attempt"
	// CodeConflictingIdentity means the same run attempt arrived with another runnerId or jobId.
	CodeConflictingIdentity Code = "conflicting-identity"
	// CodeHolderIDCollision means another job of the same run attempt, on a
	// different runner (runnerName) or with a different job id, already uses
	// the caller's holderId: two physical jobs would share one seat. Matrix
	// legs need distinct holder-id-suffix values.
	CodeHolderIDCollision Code = "holder-id-collision"
	// CodeHolderEarlierAttempt means the caller's holderId is held by an earlier attempt,
	// which only the scheduled reaper may reconcile.
	CodeHolderEarlierAttempt Code = "holder-earlier-attempt"
	// CodeDrainRequired means a migration needs an empty lock.
	CodeDrainRequired Code = "drain-required"
	// CodeMigrationStepRequired means a migration was requested from a schema other than
	// its immediate predecessor (for example 2 -> 4 in one call).
	CodeMigrationStepRequired Code = "migration-step-required"
	// CodeInvalidReport means a cleanup report that fails ValidateReport or the
	// schema-5 blocked-report rule.
	CodeInvalidReport Code = "invalid-report"
	// CodeReservationIDRequired means a reservation must be created but the caller supplied no ID.
	CodeReservationIDRequired Code = "reservation-id-required"
	// CodeInvalidQuarantineRestore means a consumed quarantine cannot be put back.
	CodeInvalidQuarantineRestore Code = "invalid-quarantine-restore"
	// CodeSchemaTooOld means an operation needs a schema the state has not reached.
	CodeSchemaTooOld Code = "schema-too-old"
	// CodeReservationNotFound means no quarantine with the exact reservation ID exists.
	CodeReservationNotFound Code = "reservation-not-found"
	// CodeIncidentNotFound means no active incident with the exact incident ID exists.
	CodeIncidentNotFound Code = "incident-not-found"
)

// Report validation codes (spec §1.4), returned by ValidateReport in this
// first-match order.
const (
	// CodeInvalidResourceSafe means the legacy resource-safe value is not a boolean.
	CodeInvalidResourceSafe Code = "invalid-resource-safe"
	// CodeInvalidResourceCleanupStatus means status is not confirmed or unknown.
	CodeInvalidResourceCleanupStatus Code = "invalid-resource-cleanup-status"
	// CodeInvalidResourceHealth means health is not healthy or blocked.
	CodeInvalidResourceHealth Code = "invalid-resource-health"
	// CodeInvalidResourceReason means the reason is not allowlisted.
	CodeInvalidResourceReason Code = "invalid-resource-reason"
	// CodeBlockedHealthReasonMismatch means blocked health without the 20111 reason.
	CodeBlockedHealthReasonMismatch Code = "blocked-health-reason-mismatch"
	// CodeAccountLimitHealthMismatch means the 20111 reason with healthy health.
	CodeAccountLimitHealthMismatch Code = "account-limit-health-mismatch"
	// CodeAccountLimitCleanupStatusMismatch means 20111+blocked with a status other than unknown.
	CodeAccountLimitCleanupStatusMismatch Code = "account-limit-cleanup-status-mismatch"
	// CodeConfirmedCleanupReasonMismatch means healthy+confirmed without reason cleanup-confirmed.
	CodeConfirmedCleanupReasonMismatch Code = "confirmed-cleanup-reason-mismatch"
	// CodeCleanupConfirmedStatusMismatch means reason cleanup-confirmed with status unknown.
	CodeCleanupConfirmedStatusMismatch Code = "cleanup-confirmed-status-mismatch"
	// CodeResourceSafeContradiction means the legacy resource-safe value disagrees with the typed report.
	CodeResourceSafeContradiction Code = "resource-safe-contradiction"
)

// Error is the only error type this package returns. Message is operator
// actionable ("verb object: detail") and never contains credentials: the
// state holds none, and reports echo only allowlisted values.
type Error struct {
	Code    Code
	Message string
}

// Error returns the message, or the code when no message was set.
func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return e.Message
}

// newError builds an *Error.
func newError(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// CodeOf returns the Code of err when it is (or wraps) an *Error, else "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Named seats, seat labels and priority classes (issue 25, schema 6).
const (
	// CodeNoMatchingSeat means the requested seat labels name a label set
	// no configured seat carries; nothing is written (refused before
	// joining). The message lists the labels that exist.
	CodeNoMatchingSeat Code = "no-matching-seat"
	// CodePriorityNotAllowed means the requested priority class is above
	// what the config allows the caller; nothing is written.
	CodePriorityNotAllowed Code = "priority-not-allowed"
	// CodeInvalidSeat means a state's seat fields are malformed: a seat or
	// label name outside [a-z0-9._-]{1,64}, labels not sorted and unique, a
	// priority outside 0..9, seat fields below schema 6, or a seat on a
	// queue entry.
	CodeInvalidSeat Code = "invalid-seat"
	// CodeSeatConflict means two holders or reservations record one seat.
	CodeSeatConflict Code = "seat-conflict"
	// CodeInvalidSeatRequest means an acquire asked for malformed labels
	// or a priority outside 0..9.
	CodeInvalidSeatRequest Code = "invalid-seat-request"
)

// Machine serialization (issue 26).
const (
	// CodeMachineIDUnavailable means the lock config sets serializeBy
	// "machine" but the acquire carries no machine id (the runner's could
	// not be read); nothing is written. The same code as
	// internal/machineid.CodeUnavailable.
	CodeMachineIDUnavailable Code = "machine-id-unavailable"
	// CodeInvalidMachineID means a recorded or requested machineId is not
	// 32 lowercase hexadecimal digits.
	CodeInvalidMachineID Code = "invalid-machine-id"
)
