// Package acquire is the acquire-build-lock action and its
// acquire-build-lock-with-cleanup variant (main and post steps; spec §1.2,
// §1.3, §3.5, §3.9): it joins the lock's FIFO queue by compare-and-swap,
// waits with conditional reads that cost nothing while the state is
// unchanged, and admits the caller as a holder.
//
// # Modes
//
// BUILD_LOCK_MODE selects the entry point: "acquire" (default), or
// "acquire-with-cleanup" (same as acquire with
// BUILD_LOCK_REGISTER_POST_CLEANUP=1: the first possible state mutation
// saves build_lock_cleanup=enabled for the post step), or "post-cleanup" (the
// post step: quarantines held capacity it cannot prove clean, removes queue
// entries, never fails).
//
// # Cost of waiting
//
// A waiting job writes nothing: only joining the queue, admission, a jobId
// backfill and leaving are writes. Every poll is a conditional GET (a 304
// is not charged). Joining the queue and admission are one write when a
// slot is free, and a write GitHub acknowledged proves the admission (its
// CAS base had no incident and the pull request head was checked just
// before), so there is no verification read. See [PollDelay] for the
// position-aware schedule.
package acquire
