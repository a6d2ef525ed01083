// Package prhead is the current-pull-request-head check (spec §1.6) that
// two actions share: require-current-pr-head (internal/actions/prhead)
// rejects a run whose pull request head moved on before expensive setup, and
// acquire (internal/actions/acquire) checks again while it waits and before
// its admission write. It reads and validates the guard's inputs
// ([ReadInputs]) and fetches the pull request through go-github
// ([Checker.Check]).
//
// The guard deliberately keeps its own small budget instead of the shared
// client's retry contract ("Server-Directed Retry Waits"): 3 attempts inside
// 30 s, a Retry-After honored up to 10 s, and an immediate failure when
// GitHub asks for a wait that cannot fit the remaining budget. Its requests
// go through internal/ghclient's transport stack (auth, pinned headers,
// go-github's rate-limit gates kept unarmed) and its one Retry-After parser,
// but not through ghclient's retries.
package prhead
