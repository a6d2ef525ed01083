// Package changes holds the pure rules of the Unity change classifier
// (classify-unity-changes; reference-behavior.md §1.8,
// unity-lifecycle-facts.md §5): the consumer's independent-paths
// declaration ([ParseIndependentPaths]), the central Unity-independent
// allowlist, the decoding of git's NUL-separated path list
// ([ParseNULPaths]) and the decision itself ([Classify]).
//
// The classifier fails safe: only a pull request whose every changed path
// is provably Unity-independent skips the licensed job. An event other than
// pull_request, an empty diff, or any path outside the allowlist and the
// declared prefixes requires Unity, and the decision names the first path
// that forced it.
//
// Nothing here runs git or reads the environment; the action
// (internal/actions/classifychanges) does, and feeds the result in.
//
// FuzzParseIndependentPaths fuzzes the declaration parser (seed corpus: the
// tricky cases); run it with go test -run '^$' -fuzz
// FuzzParseIndependentPaths ./internal/unity/changes.
package changes
