// Package releaseset is the one list of what a release ships: every command
// under cmd/ (minus the documented [Excluded] ones) for each of the six
// [Targets]. make dist (through tools/manifest -list-cmds), the release
// workflow and the manifest completeness check all read it, and its tests
// check it against cmd/, the action registry, the Makefile's cross targets
// and the release build script, so a new cmd/<name> is released without
// anyone editing a list.
package releaseset
