// Package history is the pure core of `buildlock history`: verification of
// a lock's state history (every commit that changed locks/<lock>.json on
// the state branch) and the seat-demand statistics and what-if capacity
// replay derived from it. It does no I/O and reads no clock: the reader
// (internal/history/ghsource) fetches the commits, versions and config
// history; the renderers (internal/history/render) draw the report.
// docs/history.md is the operator's guide.
//
// # What Verify checks
//
// Per version: the document decodes with the real codec (lockstate.Decode,
// every fail-closed rule); the seats in use never grow above the largest
// maxHolders any config in force allowed around that time (the config
// file's history on the default branch; a writer may have read a version up
// to Input.ConfigStaleness old); no holderId both holds and waits.
//
// Per transition: it is one that the pure core can produce from the parent.
// The verifier never re-implements a rule: for each row of the
// recognized-transition table (transitions.go: acquire, release, reap,
// recover, recover-incident) it proposes the requests the diff suggests
// (the caller's identity from its entry, the lease from expiresAt, the
// resource report from the reservation it left, the reaper's evidence from
// the quarantine reason it recorded, the exact reservation or incident id a
// recovery named), runs lockstate's transition under each candidate config
// and writer clock, and accepts the version only if the result is byte for
// byte identical (updatedAt aside, which the store stamps). Changes to the
// core (new identity fields, a release that admits the next waiters
// directly) flow in by themselves; a new kind of write is one new row.
// Independently of the replay it checks that fencing tokens strictly
// increase (the counter moves by exactly the number of admissions and every
// admission's token is above every token seen before), that the schema
// never goes down, and that a waiter is never passed more than once per
// write nor beyond maxOvertakes. At schema 6 with named seats, labels and
// priority classes (issue 25; seatrules.go) it checks that no two holders
// or reservations record one seat (seat-conflict), that every admission's
// seat carries the holder's labels under a config in force (seat-labels),
// and that no admission passed a higher-class waiter the core's admission
// plan would have seated first (priority-order); seats the config no
// longer names drain outside the capacity. An unexplained admission is
// classified as a skipped FIFO entry when earlier admissible waiters filled
// every free seat; an unexplained reaper quarantine as one without proof.
//
// Per commit: the author is a writer (the writer App's bot login), or an
// operator for recovery and for the file's first version; the commit has
// exactly one parent; and the branch still contains every commit the
// previous run verified (Checkpoint.Recent): otherwise the finding names
// the first commit a force-push or rewrite removed.
//
// A history whose start cannot be proven (the oldest listed commit is not
// where the file was created), a version that cannot be read, or a read
// bound reached is StatusIncomplete: never a pass.
//
// What it cannot prove: that a reaper's recorded evidence was true (the
// run really had ended), that a release's resource report was honest, that
// a writer's clock was right (skew is noted, not judged), or anything about
// commits to other paths between two versions of this file.
package history
