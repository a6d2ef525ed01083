// Package machineslot wires the machine-local build queue
// (internal/machinequeue, docs/machine-queue.md) into the lock actions: the
// machine-slots input and BUILD_LOCK_MACHINE_DIR, the rule that finds the
// job's long-lived process (the slot's owner), the marker acquire leaves in
// RUNNER_TEMP for the job's release and post steps, and the release of a
// slot by that marker. Acquire and release share it, so it lives beside
// actionkit rather than in either action.
//
// # The owner
//
// A slot is bound to a process whose life bounds it (filestore.Request
// Owner): when that process is proven dead, any writer reclaims the slot.
// The acquire step cannot own it, since it exits once the lock is held.
// On a GitHub runner every step of a job is a descendant of that job's
// Runner.Worker process (the runner's listener starts one worker per job;
// the worker starts each step: a composite action's `run:` shell, which
// exec's the binary, or node for the with-cleanup action, which spawns it)
// and the worker lives until the job has ended, post steps included. So
// the owner is the nearest ancestor named Runner.Worker (Runner.Worker.exe
// on Windows), found by walking parent pids up from this process (at most
// MaxAncestors steps; liveness.ParentOf). None found (a container job,
// whose steps run inside the container and cannot see the worker; a local
// run) is refused with CodeOwnerUnavailable before anything is written.
package machineslot
