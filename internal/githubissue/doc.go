// Package githubissue keeps exactly one automation-owned GitHub issue in a
// desired shape: the shared, deduplicating issue synchronizer of the build
// lock's monitors (spec §4.5, internal/githubissue).
//
// # Identity
//
// An issue belongs to a [Spec] when all of these hold:
//
//   - its body contains the Spec's Marker (an HTML comment such as
//     "<!-- build-lock-incident-recovery -->", invisible when rendered);
//   - its author is the automation's own login ([Options.Author], by default
//     github-actions[bot], the author of everything a workflow's GITHUB_TOKEN
//     creates);
//   - when [Spec.MatchTitle] is set, its title equals Spec.Title exactly.
//
// Identity is marker plus authorship, never the title alone: a lookalike
// issue that quotes the marker but was opened by anybody else is ignored, and
// (unless MatchTitle) an operator may rename the issue without the monitor
// opening a second one. Two matching issues are an error ([ErrDuplicate]):
// the synchronizer never guesses which one is canonical.
//
// # Discovery
//
// GET /repos/{owner}/{repo}/issues?state=all&creator=<author>&sort=created&
// direction=asc, following the Link rel="next" page number (never the URL
// GitHub sent: every page is requested on the fenced repository path) for at
// most [Options.MaxPages] pages. Pull requests, which share the issue list,
// are skipped. Running out of pages is an error, not a silent partial view.
//
// # Writes
//
// Sync creates the issue (POST) or updates it (PATCH) only when the body,
// title or state differs from what is wanted, so an unchanged run makes no
// write at all (no churn, no notifications). After every write the issue is
// re-discovered and compared with the wanted shape.
//
//   - Closing never creates: a closed-wanted Spec with no issue is a no-op.
//   - [Spec.PreserveBodyOnClose] closes without rewriting the body or the
//     title, so the last alert stays readable after recovery.
//   - [Spec.ClosedIsTerminal] leaves an already closed issue completely alone
//     while the wanted state is closed; a wanted open state re-opens it.
//
// # Safety
//
// Every request goes through ghclient.Client.Do (one retry contract) and is
// fenced to the configured repository: a response served from another path
// (a followed redirect) or an issue whose repository_url names another
// repository is refused. Bodies are bounded by GitHub's 65536-character
// limit before anything is sent. Errors never carry the token: ghclient
// scrubs them.
package githubissue
