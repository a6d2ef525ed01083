// Package enroll is the organization side of the workflow policy: the
// scheduled enrollment audit, the drift issue and onboarding
// (cmd/audit-enrollment; enrollment contract; docs/enrollment.md).
//
// # audit
//
// Reads the registry (locks/unity-enrollment-policy.json on the lock
// repository's default branch, through the Contents API with the
// workflow's GITHUB_TOKEN, or a file), then for each enrolled repository:
// a reader App installation token scoped to exactly that repository with
// contents: read (one client per repository, so one repository the App
// cannot see is one finding, not a failed run), the head commit of the
// registered default branch, the snapshot at that exact commit through the
// Git trees and blobs API (internal/policy/snapshot), and policy.Analyze
// with the registry's pins and exceptions. After the last repository every
// head is read again: a head that moved is repository-retrieval-incomplete.
// The result is the source-free [Artifact] (repository, commit, path, job,
// class, code; never file content). Exit 0 clean, 1 findings or
// incomplete, 2 usage or registry error.
//
// # sync-issue
//
// Validates the artifact strictly ([DecodeArtifact]) and the artifact URL
// (https, the server's host, this run's artifact path), renders the
// bounded, deterministic body ([RenderBody]: 40 findings and 16 inventory
// rows with omission counts, at most 60 KiB) and keeps one issue through
// internal/githubissue, found again by [Marker] and the workflow bot as
// author: opened or updated on drift, left alone when nothing changed,
// closed when a complete audit is clean (and then left alone), reopened
// when drift returns. Two syncs that race retire the newer duplicate
// ([IssueSyncer.Sync]); the workflow's concurrency group serializes runs in
// the first place. Exit 0 synced, 1 synced but incomplete (the run stays
// red) or a failed sync, 2 usage or an invalid artifact.
//
// # onboard
//
// Validates a candidate ([Onboarder.Onboard]: same owner as the lock
// repository, readable by the reader App, GitHub's canonical name, default
// branch and fork flag, a 40-hex head), runs the audit of its head as a
// preview, and opens a pull request on the lock repository that adds the
// registry row (a branch enrollment/<owner>-<name>, one commit) with the
// facts, the preview and the manual [Checklist] in its body. A refusal
// writes nothing; a rerun finds the open pull request.
package enroll
