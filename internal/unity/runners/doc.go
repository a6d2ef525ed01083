// Package runners holds the pure rules of the Unity runner preflight
// (check-unity-runner-availability; reference-behavior.md §1.7,
// unity-lifecycle-facts.md §6): the required-label-sets declaration
// ([ParseLabelSets]), the bookkeeping of GitHub's paginated runner listings
// ([Pager]), and the availability verdict over the runners the calling
// repository can reach ([Evaluate]).
//
// Nothing here performs I/O or reads a clock: the action
// (internal/actions/preflight) fetches the inventory and feeds it in.
//
// The rule the reference documents but does not keep is kept here: a label
// set whose registered runners are all offline passes, with a warning that
// names the runners the job waits on; a label set without any registered
// runner fails, because a job queued for it can never start.
//
// FuzzParseLabelSets fuzzes the declaration parser (seed corpus: the tricky
// cases); run it with go test -run '^$' -fuzz FuzzParseLabelSets
// ./internal/unity/runners.
package runners
