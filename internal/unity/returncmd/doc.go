// Package returncmd is the Unity license-return command and its evidence
// (unity-lifecycle-facts §2): the exact arguments, the allowlisted
// environment, the run under process-tree control (240 s timeout, 30 s
// grace, 25 MiB combined output), the mapping of what happened to the
// return action's outputs (exit code 124 when its own timer fired, 1 for a
// signal-only exit), and the evidence file: redacted before it touches disk,
// written once with exclusive create, digested.
//
// Credentials reach the editor only through its arguments, as the reference
// passes them; they are never in its environment, and Redact removes them
// from everything written.
package returncmd
