// Package ghclient builds the go-github client every build-lock command uses
// and owns the one retry/deadline contract they all share. Nothing above
// this package retries an HTTP request, parses a rate-limit header or
// decides whether a write may have landed; callers switch on [Class].
//
// # Construction (spec §3.1, §3.4; notes B.9-B.10)
//
// [New] takes either a plain token or a GitHub App (id + PEM key + the
// installation's repository or owner). The transport stack, top to bottom:
//
//	go-github Client
//	  shieldTransport  keeps go-github v66's wall-clock rate-limit gates unarmed
//	  etagTransport    conditional GETs; 304 → cached 200 (notes B.6)
//	  authTransport    Authorization from the token source; marks "sent"
//	  baseTransport    pins X-GitHub-Api-Version 2022-11-28, Accept, User-Agent; Stats
//	  Config.Transport (http.DefaultTransport, or an emulator's in-memory one)
//
// App auth uses ghinstallation v2.12.0 (which pairs with go-github v66) as a
// minting engine only: an AppsTransport (JWT signed by a clock-aware signer
// with iat−60 s / exp+540 s) sits on the same baseTransport and serves the
// installation lookup (GET /repos/{o}/{r}/installation or GET
// /orgs/{o}/installation, through a JWT-only go-github client) and
// ghinstallation.Transport.Token, which POSTs
// /app/installations/{id}/access_tokens with the configured repositories and
// permissions. The token is cached here, reused while now+5 min < expiry on
// the injected clock, masked through Config.Mask before first use, and put
// on resource requests by authTransport. A fresh ghinstallation.Transport is
// built for every mint, so an invalidated token can never be served again.
// Nothing is fetched until the first call needs a token.
//
// # The retry contract (spec §3.6; build-lock-reference "Transient Auth
// Failures", "Server-Directed Retry Waits", "Release Retry Budget")
//
// [Client.Do] runs one logical call. Retryable: 408, 429, every 5xx, 401,
// GitHub's HTML "Whoa there!" 400, a 403 that is a rate limit (Retry-After
// present, X-RateLimit-Remaining: 0, or a message mentioning "rate limit"),
// a 202 (go-github's AcceptedError), and transport errors. Everything else
// (JSON 400, plain 403, 404, 409, 422, …) fails at once; a 409 or 422 on a
// mutation is [ClassConflict]. Headers are read from the raw response with
// errors.As on go-github's error types, because v66 ignores 429 and
// HTTP-date Retry-After values (style guide §3.7, §7 rule 11).
//
// Waits. With a server instruction — Retry-After as ^[0-9]+$ seconds or an
// IMF-fixdate that round-trips exactly, or (only under a Deadline with
// WaitPrimaryReset) a primary limit's X-RateLimit-Reset — the wait is
// max(instruction, min(base, max)); under a Deadline it is honored in full
// (clamped to the deadline), otherwise capped at max(60 s, min(base, max)).
// A Retry-After also holds back every later attempt on the same client
// (the next call, or the credential lookup serving a call) until it
// elapses, with the same ceiling; a call whose deadline ends inside that
// window is exhausted without sending (R-F4).
// Without one it is full-jitter exponential backoff, floor(rand ×
// (min(base·2^(n−1), max)+1)) ms, raised to [MinBackoff] so a near-zero
// draw is never a tight loop. (The reference uses partial jitter by default
// and full jitter only for the runner preflight; this port uses full jitter
// everywhere, as the issue requires.)
//
// Budgets. Attempt-bounded calls stop after MaxAttempts (knob, default 5).
// With an absolute Deadline there is no attempt ceiling unless one is set
// explicitly; retries stop once now >= Deadline, each wait is clamped to it,
// and every attempt runs under a context expiring at it so a stalled
// connection is aborted (Appendix B.6). A call starting past its deadline
// gets exactly one attempt. A cancelled context fails at once, without a
// sleep or a warning; an expired caller deadline, like an exhausted budget,
// yields Code [CodeRetryExhausted].
//
// 401. The first 401 of a logical call invalidates the installation token it
// was sent with (by generation, so a token a concurrent call just minted
// survives), re-mints, and replays immediately without consuming an attempt;
// later 401s back off like any retryable status (spec §3.4). With a plain
// token there is nothing to re-mint, so every 401 backs off.
//
// Credentials. Each lookup or mint runs as an inner call on 3 attempts, or
// inherits the serving call's deadline. If that inner budget is exhausted,
// the serving attempt has failed ("credential unavailable: …") and the
// serving call's own budget decides whether to try again. A non-retryable
// credential failure (no installation, 403, bad token response) ends the
// call. A mint 404 re-looks-up the installation once.
//
// Ambiguity (spec §3.3, Appendix B.5). Per logical call, spanning retries: an
// attempt of a mutation that got 408, a 5xx, or a transport error after the
// request left the client has an unknown outcome. A later 409/422 in the same
// call is then [ClassAmbiguous], and any failure carries MaybeApplied. A 401,
// a rate limit, a dial failure or a credential failure never counts.
//
// Secrets (style guide §7 rule 23). Error and warning text is built from
// status, request id, GitHub's message and sanitised URLs, then scrubbed of
// every token this client has held and of anything token-, JWT-,
// Authorization- or PEM-shaped.
package ghclient
