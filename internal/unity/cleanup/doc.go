// Package cleanup is the pure rule of the require-confirmed-unity-cleanup
// gate (reference-behavior.md §1.11, unity-lifecycle-facts.md §7): after the
// license return, the evidence classifier and release have run, may this job
// call its licensed seat clean?
//
// [Evaluate] takes the exact step outputs and returns a [Decision] with a
// stable reason code for every rule. It does no I/O. Safety rules:
//
//   - Only an exact acquired=false makes the gate non-applicable; any other
//     value but true (empty, missing, garbage) is unsafe.
//   - An acquired job is safe only with a complete, confirmed, healthy
//     classification, a successful release that removed the holder, and a
//     coherent lifecycle record: a cooldown reservation or a direct release,
//     an incident id exactly when the lock reports global-quarantined.
//   - lock-release-unreachable is named: the seat was returned but its
//     record is in doubt, which is unsafe yet distinct from unproven cleanup.
package cleanup
