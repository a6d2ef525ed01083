// Package filestore keeps the machine queue (package machinequeue) in a
// machine-global directory shared by every runner agent on the machine,
// and implements the waiting: Take (join, wait FIFO, hold), Release, and
// the cleanup when the caller's context ends.
//
// Files in the directory (docs/machine-queue.md):
//
//	queue.lock   the lock file, never deleted, never written: an exclusive OS file
//	             lock on it serializes every read-modify-write and every read
//	queue.json   the state (machinequeue.Encode), replaced only by rename
//	queue-*.tmp  a writer's next state before the rename; left over only by a writer
//	             that died, removed by the next writer under the exclusive lock
//
// Locking: flock(2) on Linux and macOS, LockFileEx on Windows (through
// github.com/gofrs/flock), never an O_EXCL lock file. The OS drops the lock
// of a process that dies, the moment it dies, so a lock is never left by a
// dead writer and never has to be broken: breaking an O_EXCL lock file
// after proving its writer dead is itself a check-then-act race (two
// breakers judge the same dead owner, one breaks and locks, the other then
// deletes the live lock) that needs a second lock to close. The lock file
// is a separate file because Windows byte-range locks are mandatory: a
// lock on queue.json itself would stop the rename that replaces it. It is
// never deleted, because a lock taken on a deleted file's inode excludes
// nobody who opens the new file (this is also why the default directory
// avoids /tmp, whose cleaners delete idle files).
//
// Read-modify-write, under the exclusive lock: remove left-over temp files;
// read queue.json (missing = empty; unreadable or invalid = refused,
// nothing written); probe every recorded process (package liveness); run
// the pure transition; if it changed anything, write the new state to a
// fresh temp file (O_EXCL, random name), fsync it, rename it over
// queue.json; unlock. A writer killed anywhere leaves either the old or
// the new state, whole (the rename is atomic and the data was synced
// before it), and its lock is gone with it. The directory itself is not
// fsynced: after a power loss every process of the machine is dead, and an
// older state is reclaimed exactly like the newer one would have been.
//
// Every access takes the exclusive lock, reads too: a shared lock is
// granted while a writer waits, so the overlapping reads of many waiting
// pollers can leave a writer no gap at all (the process test stalled that
// way with 80 processes before reads became exclusive).
//
// Waiting: after joining, Take polls (reading under the lock) and writes nothing
// while nothing changed (the waiter's poll is read-only); it takes the
// exclusive lock again only when the poll finds a recorded process dead or
// the head admissible. Whoever frees a slot (a release, a reclaim) hands it
// to the head in the same write, so the head only has to notice. The head
// polls every Options.Poll, position p every p×Poll up to Options.MaxPoll:
// there is no busy loop, and the clock is injected.
//
// Cancellation: when ctx ends before Take returns, Take removes the
// caller's entry (queued, or holding if the admission landed meanwhile)
// with a fresh context bounded by Options.CancelWindow and returns
// CodeCancelled; a process killed instead is reclaimed by the next writer
// once its death is proven.
//
// The package never reads the environment: the directory is a parameter
// (DefaultDir gives the documented per-OS default).
package filestore
