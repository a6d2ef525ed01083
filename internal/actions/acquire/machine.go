package acquire

import (
	"context"
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machineid"
)

// ensureMachineID reads this machine's id for the lock repository the first
// time a config snapshot sets serializeBy "machine" (issue 26), and
// records it on the identity every entry of this job is written with. It
// costs one repository read (the lock repository's numeric id, which the
// hash is keyed with; shared with the state-branch guard) and one local
// read. An id that cannot be read refuses the acquire with
// machine-id-unavailable before anything is written under that config.
// The id, raw or hashed, is never printed.
func (q *acquirer) ensureMachineID(ctx context.Context) error {
	if !q.cfg.ByMachine() || q.id.MachineID != "" {
		return nil
	}
	repoID, err := q.st.RepositoryID(ctx)
	if err != nil {
		return err
	}
	read := q.d.MachineID
	if read == nil {
		read = systemMachineID
	}
	id, err := read(ctx, repoID)
	if err == nil && !lockstate.ValidMachineID(id) {
		err = fmt.Errorf("the machine id source returned a value that is not %d lowercase hexadecimal digits", lockstate.MachineIDLength)
	}
	if err != nil {
		return lockaction.Refuse(string(lockstate.CodeMachineIDUnavailable),
			"%s sets serializeBy \"machine\", but this runner's machine id could not be read: %v. Nothing was written; fix the machine id source or run this job on a runner whose id can be read (docs/machine-queue.md, \"Machine identity\")",
			q.st.ConfigPath(), err)
	}
	q.id.MachineID = id
	q.a.Printf("%s serializes by machine: this job's entries record this machine's id (hashed per lock repository).", q.s.Target.Lock)
	return nil
}

// systemMachineID is the default Deps.MachineID: the operating system's
// machine id hashed with the lock repository's id.
func systemMachineID(ctx context.Context, repositoryID int64) (string, error) {
	id, err := machineid.ForRepository(ctx, machineid.System(), repositoryID)
	if err != nil {
		return "", err
	}
	return id.Hash, nil
}

// reclaimedFrom says whose quarantine this job's admission reclaimed: its
// own runner's, or (serializeBy "machine") a sibling agent's on this
// machine.
func (q *acquirer) reclaimedFrom() string {
	if r := q.consumedQuarantine; r != nil && r.RunnerID != q.id.RunnerID {
		return "yes (a sibling agent on this machine)"
	}
	return "yes (same runner)"
}
