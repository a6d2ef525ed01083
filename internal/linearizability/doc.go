// Package linearizability records what the clients of a lock observed — every
// compare-and-swap write of the state document with its invocation and
// response, the outcomes the actions reported (acquired with a fencing
// token, released, recovered), and what GitHub Actions made true meanwhile
// (runs and jobs that ended, reruns) — and checks the recorded history with
// porcupine (github.com/anishathalye/porcupine) against a sequential model
// of the semaphore, the way etcd's robustness tests check etcd.
//
// The model (docs/simulation.md "Linearizability"):
//
//   - The state file is a compare-and-swap register, as GitHub's Contents API
//     makes it: a write applies only when its sha is the file's current blob
//     SHA (or the file is absent), a 409 or 422 means it was not, and a write
//     whose answer was lost or failed may or may not have applied (recorded
//     with an unbounded return time, so porcupine may place it anywhere after
//     its invocation, or treat it as never applied).
//   - Every applied write must be a legal step of the semaphore for the actor
//     that sent it (LockRules.Judge): seats (holders + reservations never
//     above maxHolders), FIFO with runner serialization and the overtaking
//     bound, fencing tokens, reservations and incidents, and who may remove
//     what (a job only its own entries, fenced by run attempt; the reaper only
//     entries whose run ended or whose lease expired; recovery only what the
//     operator named).
//   - Every reported outcome must hold at one instant inside its step:
//     acquired=true with token T at state-sha S means the job held the seat
//     with token T in version S; released=true means none of the job's entries
//     was left.
//
// The model is written from docs/state-schema.md, not from internal/lockstate,
// so a bug in the pure transitions is caught too; only the decoder is shared.
// Porcupine searches for one order of all operations that respects real time
// (an operation that returned before another was invoked comes first) and the
// model; when none exists the history is not linearizable and the check writes
// porcupine's HTML visualization.
package linearizability
