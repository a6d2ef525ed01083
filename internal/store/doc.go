// Package store is the only place that knows both the GitHub API and the
// lock-state document. It reads locks/<lock>.json from the state branch of
// the lock repository and changes it only by compare-and-swap: every write is
// a Contents API PUT carrying the blob SHA of the version it was computed
// from, so GitHub rejects it (409, or 422 when the file appeared meanwhile)
// if anyone else wrote first.
//
// Safety properties the store provides to every action:
//   - A state that fails validation is never overwritten: Load returns the
//     typed decode error and Update never calls the mutation.
//   - A write whose outcome is unknown (a 5xx or a lost response, then a
//     conflict) is never blindly retried. The next round re-reads and
//     re-applies the pure mutation, which sees whether its effect already
//     landed; Result.Ambiguous tells the caller to reconcile its report.
//   - The SHA returned by our own write is the next compare-and-swap base, so
//     a caller that writes twice does not pay a read in between.
//   - The state branch is created from the default branch's head only when a
//     write reports it missing: steady-state operations never check it.
//
// Liveness is bounded: Update gives up after Options.MaxRounds conflicts with
// ErrTooManyConflicts, sleeping a jittered ConflictDelay between rounds so
// colliding writers spread out.
package store
