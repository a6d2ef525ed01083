// Package snapshot reads a repository at one commit into a
// policy.Snapshot: the workflow files GitHub loads, then whatever
// policy.References says they use (local composite actions, transitively;
// local reusable workflows; pinned remote reusable workflows through a
// RemoteReader), within fixed bounds (MaxFileBytes, MaxFiles, MaxRounds).
//
// Two Sources: [Dir] is a local checkout (buildlock policy check); [GitHub]
// is an exact commit read through the Git database API via
// internal/ghclient (the enrollment audit): the commit's tree one directory
// at a time with non-recursive trees, blobs fetched raw, bounded and
// verified against their git id. Nothing is executed and nothing is
// checked out.
//
// A read that fails for any reason other than absence (a truncated tree, a
// file too large, a blob that does not hash to its id, a symlink, an API
// error) becomes a policy.Gap, which the analyzer reports as
// repository-retrieval-incomplete: an incomplete read is a finding, never
// a pass.
package snapshot
