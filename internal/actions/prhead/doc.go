// Package prhead is the current-pull-request-head guard (spec §1.6): it
// rejects a run whose pull request head moved on, before expensive setup and
// again while acquire waits. It is both the require-current-pr-head action
// ([Run]) and the check acquire embeds ([Checker.Check]).
//
// The guard deliberately keeps its own small budget instead of the shared
// client's ("Server-Directed Retry Waits"): 3 attempts inside 30 s, a
// Retry-After honored up to 10 s, and an immediate failure when GitHub asks
// for a wait that cannot fit the remaining budget.
package prhead
