package release

import (
	"context"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
)

// freeMachineSlot frees this job's machine slot once its organization
// seat is released (issue 26; docs/machine-queue.md): acquire with
// machine-slots left a marker in RUNNER_TEMP naming the machine queue
// directory and the slot's owner. No marker is nothing to do. A release
// whose organization cleanup failed returns before this, so the slot is
// kept while the organization may still record the job; the job's end
// frees it then. A failure here only warns: the seat is released, and the
// slot is reclaimed once the job's worker process has exited.
func (r *releaser) freeMachineSlot(ctx context.Context) {
	f, err := machineslot.Free(ctx, r.s.RunnerTemp, r.s.Target, r.s.HolderID, r.d.Machine, r.d.Clock)
	switch {
	case err != nil:
		r.a.Warning("Could not free this job's machine slot (it is freed when the job ends): " + err.Error())
	case f.Found:
		r.a.Printf("Machine slot of %s: %s.", r.s.HolderID, f.Decision.Outcome)
	}
}
