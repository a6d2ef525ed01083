// Package doctor checks a real installation of the build lock with the
// credentials given (`buildlock doctor --lock-repository OWNER/NAME`,
// docs/adopting.md): both GitHub Apps installed with exactly the
// permissions docs/adopting.md names and no more, the writer App on the lock
// repository only, the state branch present and protected, the default
// branch protected, every lock config valid, and the reaper workflow
// present, scheduled and enabled. Every check has a stable ID, passes,
// fails or is skipped, and says how to fix a failure.
//
// The rules (rules.go) are pure functions over what GitHub answered; Run
// (run.go) asks GitHub through internal/ghclient and internal/store.
package doctor
