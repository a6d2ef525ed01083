// Package registry is the codec of the organization's enrollment registry,
// locks/unity-enrollment-policy.json in the lock repository ([Path]): which repositories
// are enrolled, which lock-action commits consumers may pin, and the owned,
// expiring exceptions for synthetic or disabled Unity-shaped workflows
// (enrollment contract "Registry"; docs/enrollment.md).
//
// The package is pure: [Decode] takes bytes and returns a validated
// [Registry] or a typed [*Error] with a stable [Code]; [Encode] writes the
// canonical form (two-space JSON, repositories and exceptions sorted, one
// trailing newline) that the onboarding program commits. Nothing is
// repaired: a registry that is not exactly valid is refused whole, so an
// audit never runs against a perimeter nobody reviewed.
//
// Parsing is strict:
//
//   - 1..65,536 bytes holding exactly one JSON value, an object; duplicate
//     keys at any depth and unknown fields are refused;
//   - schemaVersion 1; organization a GitHub login, equal to the expected
//     owner (the lock repository's) when the caller names one;
//   - approvedLockShas: at least one, each 40 lowercase hex, no duplicates
//     (compared trimmed and lowercased); approvedReturnShas: may be empty,
//     same shape, and every one of them also in approvedLockShas;
//   - repositories: 1..[MaxRepositories] rows of "owner/name" of the
//     organization (owner at most 39, name at most 100 characters), no
//     case-folded duplicates, defaultBranch a valid git ref name, fork and
//     allowWorkflowDispatch present as booleans;
//   - exceptions: repository registered and spelled exactly as registered,
//     path a workflow file under .github/workflows, classification
//     "synthetic" or "disabled" (controlled-canary comes from the trigger and
//     non-licensing-static is the default, so neither can be granted), owner
//     a GitHub login, expiresAt an RFC 3339 time; no duplicate
//     repository/path pair.
//
// An expired exception is not a decode error: the analyzer reports it as an
// expired-policy-exception finding at audit time, with the injected clock.
package registry
