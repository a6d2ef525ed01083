// Package histgen produces lock-state histories on the GitHub emulator with
// their ground truth: a seeded discrete-event simulation of jobs sharing a
// lock in virtual time (a fake clock shared with the emulator), whose every
// transition is the pure core's (lockstate) and whose every write is a real
// compare-and-swap through internal/store and internal/ghclient over the
// emulator's in-memory transport, authored by the writer App (and by an
// operator account for recoveries and the lock's bootstrap). The tests of
// `buildlock history` verify these histories and check the report against
// Truth; `make bench` times verification of 1,000 and 10,000 commits.
//
// Waiters are admitted the moment the core would admit them (after every
// event, each waiter polls in queue order until nobody more is admitted),
// which is also how the what-if replay models handoff: replaying a
// generated history's demand at its own seat count must give back the
// generated waits.
package histgen
