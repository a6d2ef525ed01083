// Package preflight is the check-unity-runner-availability action
// (cmd/preflight; reference-behavior.md §1.7, unity-lifecycle-facts.md §6):
// a cheap hosted step that proves, before a licensed job is queued, that
// every runner label set the job may ask for has at least one REGISTERED
// self-hosted runner the calling repository can use. A job queued for a
// label set nobody has would wait forever; a busy or offline runner is
// fine, because GitHub holds the job until it picks it up.
//
// It mints one reader App installation token restricted to
// organization_self_hosted_runners: read (through internal/ghclient and
// ghinstallation), lists the runner groups visible to the calling
// repository and each group's runners (100 per page, at most 10 pages,
// counted against total_count), and hands the inventory to the pure rules
// of internal/unity/runners. Token minting and every page share one 150 s
// deadline and the shared retry contract with this action's knobs (13
// attempts, 5 s base, 60 s cap, full jitter).
package preflight
