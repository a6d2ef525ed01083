// Package lockstate is the pure core of the organization build lock: the
// schema of locks/<lock>.json (schemas 1 through 5), its byte-exact codec, the
// lock config, the one-way migrations and every state transition.
//
// The package does no I/O, reads no clock (now is always a parameter) and
// uses no randomness (IDs arrive in requests). It imports nothing from the
// project. Callers read a document, Decode it, run one transition, and write
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
//   - Transitions never modify their input state.
//
// Transitions: Acquire (admission, one acquire-loop iteration), Cleanup
// (release, post, timeout, cancellation and pre-activation retraction),
// RecoverQuarantine and RecoverIncident (operator recovery). The scheduled
// reaper's transitions (quarantining a stale holder, auto-recovering an aged
// quarantine, pruning finished queue entries) belong in reap.go with the same
// shape: func(s *State, cfg Config, req ReapRequest, now time.Time)
// (*State, ReapDecision, error), with the run-status evidence passed in.
package lockstate
