// Package release is the release-build-lock action (spec §1.4, §3.7, §3.8):
// exact cleanup of this run's holder slot and queue entries, turning a held
// slot into a cooldown (confirmed resource cleanup) or a quarantine
// (unproven), or raising the global account incident for a blocked report.
//
// Release is deliberately patient where acquire fails fast: the licensed
// work is over, so it bounds its lock-state calls by wall clock
// (release-retry-deadline-seconds, default 120 s), split into three absolute
// phase deadlines — state branch 1/8, lock config the rest of the first
// quarter, cleanup the remainder — each of which also aborts a request
// stalled in flight. A report that fails validation degrades to
// unknown/healthy and still cleans up before the step fails.
package release
