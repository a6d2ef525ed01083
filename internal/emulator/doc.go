// Package emulator is a stateful, in-process emulator of the subset of the
// GitHub REST API that the build-lock suite uses. It is a product feature,
// not a test mock: every test, the demo and local runs point their GitHub
// client at it instead of api.github.com, so it reproduces GitHub's observed
// semantics rather than whatever is convenient.
//
// What it models:
//
//   - Git: repositories with branches, commits (each write is a commit whose
//     parent is the branch head) and blobs addressed by their real git blob
//     SHA-1 ("blob <len>\x00<content>").
//   - The Contents API with the measured compare-and-swap semantics of
//     PUT /repos/{o}/{r}/contents/{path} (201/200/409/422/404, including the
//     "absent file + any sha → 201" gap), ETag / If-None-Match → 304 that is
//     not charged against the primary rate limit, and the raw media type.
//   - GitHub App authentication: RS256 JWTs verified against registered
//     public keys with GitHub's iat/exp rules, installation lookups,
//     installation access tokens (1 hour, scoped by repositories and
//     permissions), plain tokens such as a workflow's GITHUB_TOKEN.
//   - Primary rate limits per credential with x-ratelimit-* headers.
//   - Workflow runs, attempts and jobs; pull requests; issues; organization
//     runner groups and runners.
//   - Fault injection (latency, 5xx/408, 401 bursts, secondary 403/429 with
//     Retry-After, primary exhaustion, stalls, write-accepted-but-response-
//     lost, stale reads, the HTML "Whoa there!" 400 page, connection resets).
//   - Metrics (charged vs 304, writes, conflicts, faults, a request log) and
//     the full history of every file on every branch.
//
// The REST API is served at the root of Handler() (a client's base URL is
// "http://host:port/"); the prefix "/api/v3/" is also accepted, as GitHub
// Enterprise Server uses it. The unauthenticated admin API lives under
// "/_emulator/" and is documented in docs/emulator.md.
//
// Every timestamp (commit dates, token expiry, rate-limit windows,
// Retry-After dates) comes from Options.Clock, so simulations can run on fake
// time. Given the same Seed and the same sequence of requests, generated
// tokens, request IDs and probabilistic faults are identical.
//
// Credentials never appear in metrics, logs, history or the admin state dump:
// they are identified by labels such as "installation:12", "app:7" or
// "token:<label>".
package emulator
