// Package e2e holds the end-to-end test of the runner half of the Unity
// lifecycle: acquire on the GitHub emulator, the license return against the
// fake editor, the cleanup-evidence classifier, release with the
// classifier's typed report, and the cleanup gate, all in process, with the
// seat ending released, in cooldown, quarantined or under a global incident
// as the evidence requires. It has no non-test code.
package e2e
