// Package lockstate is the pure core of the organization build lock: the
// schema of locks/<lock>.json (schemas 1 through 6), its byte-exact codec, the
// lock config, the one-way migrations and every state transition.
// docs/state-schema.md describes every schema field by field for operators.
//
// The package does no I/O, reads no clock (now is always a parameter) and
// uses no randomness (IDs arrive in requests). It imports nothing from the
// project but internal/plant, a leaf whose planted-bug switches are the
// constant false outside `go test -tags plantedbugs` (the simulation's proof
// that its checker can fail). Callers read a document, Decode it, run one transition, and write
// Encode(result) by compare-and-swap when the decision says Changed.
//
// Safety rules enforced here:
//
//   - Fail closed on read. Decode applies every normalizeState rule of the
//     reference (spec §2.3) and returns a typed *Error with a stable Code;
//     nothing is repaired. A schema newer than MaxSchemaVersion asks for an
//     upgrade instead of being rewritten.
//   - Never write what could not be read back. Encode validates first and
//     produces exactly the reference bytes (JSON.stringify(state, null, 2)
//     plus a newline, spec §2.1), so JS and Go clients can share one file.
//   - Capacity. freeSlots = maxHolders − holders − reservations; admission
//     needs a free slot, except a same-runner quarantine reclaim, which swaps
//     the reservation for a holder in one write.
//   - Runner serialization (schema >= 3 or the config flag): one slot or
//     reservation per runner, FIFO per runner, and the run-attempt fence
//     refuses stale or conflicting attempts.
//   - One-way migrations, drained lock only, one step per call.
//   - Ownership. Cleanup removes only the caller's entries (same holderId,
//     attempt >= stored from schema 3). From schema 4 a removed holder leaves
//     a cooldown (proven cleanup) or a quarantine (anything else).
//   - Schema 5: one immutable account incident blocks every admission until
//     RecoverIncident clears it.
//   - Schema 6 (this port's own; config fencedAdmission): fencing tokens and
//     bounded overtaking, described below.
//   - Transitions never modify their input state.
//
// Schema 6 is introduced the way the reference introduces every schema: an
// explicit config flag (fencedAdmission, which requires accountHealth), a
// drained lock (observed schema exactly 5, no holders, queue entries or
// reservations; deferred without error while an incident is active), one
// way (turning the flag off keeps schema 6), and older clients fail closed:
// the JavaScript reference and pre-6 Go builds read schemaVersion 6 as
// unsupported or newer and write nothing, so they can never drop the new
// fields by rewriting the file.
//
// Fencing: State.FencingToken is the last token issued. Every admission at
// schema 6 (including a same-runner quarantine reclaim) increments it and
// stamps the new holder with the result; nothing else changes it, so tokens
// strictly increase and are never reused (a retracted or released admission
// burns its token). Decode refuses a holder token of 0, above the counter,
// or shared by two holders. Steps that act for an admission compare the
// token they were given (AcquireDecision.FencingToken, output
// fencing-token) with FencingToken(s, holderID) on a fresh read.
//
// Bounded overtaking: under runner serialization the admission scan skips a
// waiter whose runner is busy, so a later job on a free runner can be
// admitted first. At schema 6 such an admission increments Entry.Overtakes
// of every earlier waiter it passed that could not have been admitted
// instead, in the admission's own write. A blocked waiter whose overtakes
// reached Config.MaxOvertakes (default 2, 0 = strict FIFO) is a barrier:
// the scan admits nobody behind it until it is admitted or leaves. A
// same-runner quarantine reclaim takes no seat another waiter could use, so
// it passes nobody and no barrier stops it. AdmissibleRank tells a waiter
// how many admissible waiters are ahead of it (-1 when it is blocked), for
// position-aware polling.
//
// Transitions: Acquire (admission, one acquire-loop iteration), Cleanup
// (release, post, timeout, cancellation and pre-activation retraction),
// RecoverQuarantine and RecoverIncident (operator recovery). The scheduled
// reaper's transitions (quarantining a stale holder, auto-recovering an aged
// quarantine, pruning finished queue entries) belong in reap.go with the same
// shape: func(s *State, cfg Config, req ReapRequest, now time.Time)
// (*State, ReapDecision, error), with the run-status evidence passed in.
// Like every transition they must carry State.FencingToken, holder tokens
// and queue overtakes over unchanged (s.Clone() does).
package lockstate
