// Package classifychanges is the classify-unity-changes action (the
// "changes" mode of cmd/classify; reference-behavior.md §1.8,
// unity-lifecycle-facts.md §5). It writes unity-required=true before
// anything else, so a failure at any later point leaves "requires Unity"
// behind; validates the independent-paths declaration on every event; and,
// for a pull_request event only, asks a real git for the changed paths and
// lets internal/unity/changes decide.
//
// Git is run as an untrusted-input tool: resolved once to an absolute path
// under /usr/bin:/bin, with an environment built from scratch (no inherited
// GIT_* variable, no global or system config), every option that could run
// repository-controlled code disabled (no replace objects, no external
// diff, no textconv), NUL-separated output read under a 16 MiB bound, and a
// time limit.
package classifychanges
