// Package requestbudget bounds the GitHub API requests one run of a central
// operation may send: the scheduled reaper (internal/actions/reap), operator
// recovery (internal/actions/recover) and the monitors (internal/monitor/...).
// Those runs share an installation's hourly primary rate limit (5,000
// requests an hour at minimum for a GitHub App installation, 1,000 for a
// workflow's GITHUB_TOKEN) with every job of the organization, so a huge or
// hostile lock-state document must never make one run spend it.
//
// A [Budget] is counted at the transport: [Budget.Transport] wraps the base
// http.RoundTripper handed to internal/ghclient, below its retry loop, its
// ETag cache and its App authentication, so every request that leaves the
// process counts: resource calls, retries, conditional GETs answered 304
// (which GitHub does not charge, but which are still requests), JWT
// installation lookups and installation-token mints.
//
// A request that would exceed the ceiling of its context (see
// [Budget.Within]) is not sent. It cancels that context with a
// [*SpentError] cause, so the client's retry loop stops at once instead of
// backing off against a budget that cannot refill, and it is answered
// locally with 429 Too Many Requests and header X-Buildlock-Request-Budget:
// spent, an answer that proves nothing was applied, so a refused write is
// never taken for an ambiguous one. Callers tell a spent budget from a
// deadline or a cancellation with [Spent].
//
// The transport also records the lowest share of the hourly limit that
// GitHub reported left (x-ratelimit-remaining of x-ratelimit-limit), so a
// caller can stop before it drives an installation the organization's jobs
// depend on below a floor ([Budget.BelowFloor]).
//
// [Knob] resolves a budget from an action input and the
// BUILD_LOCK_REQUEST_BUDGET environment variable with the validation rules
// of the other tuning knobs (internal/ghclient.ParseKnob): digits only,
// inside documented bounds, and an invalid value warns and falls back
// rather than failing the run.
package requestbudget
