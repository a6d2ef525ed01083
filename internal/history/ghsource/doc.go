// Package ghsource reads a lock's state history from GitHub for
// internal/history: the commits that touched locks/<lock>.json on the state
// branch (the commits list filtered by path, 100 per page, bounded), each
// version's bytes (one Contents read at the commit, checked against the
// blob id it reports), the lock config's history on the default branch,
// and the proof that the history starts where the file was created. It
// resumes from a checkpoint: only commits after the checkpoint's head are
// read, and a head the branch no longer contains makes it list the whole
// history so the verifier can name what a rewrite removed.
//
// Every request goes through ghclient.Client.Do (the one retry contract);
// a version or listing that cannot be read fails the load with a typed
// *Error: a truncated or unreadable history is never a pass. Only
// contents: read is needed.
package ghsource
