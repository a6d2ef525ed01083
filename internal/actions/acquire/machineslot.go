package acquire

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/actionkit/machineslot"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	mq "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/machinequeue/filestore"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/markdown"
)

// The machine-local build queue (issue 26; docs/machine-queue.md): with
// machine-slots K, the job takes one of K slots of the queue shared by
// every runner agent of the machine before it joins the organization
// queue, so no job holds an organization seat (a license) while it waits
// for its machine. The order of the whole acquire:
//
//  1. settings (machine-slots, BUILD_LOCK_MACHINE_DIR), no I/O;
//  2. the owner: the job's Runner.Worker process (machineslot.FindOwner),
//     refused with machine-slot-owner-unavailable before any request;
//  3. the organization reads (job id, pull request head, lock config);
//  4. the machine slot (filestore.Take on the acquire's deadline-bound
//     context: a timeout or a cancellation while waiting removes the
//     entry), its marker written for release and post before joining;
//  5. the organization queue (loop).
//
// A failure after 4 frees the slot after the organization cleanup
// (freeMachineSlotAfterFailure), unless that cleanup could not prove the
// organization holds nothing of this job: then the slot stays for the
// always() release step (which frees the seat first, then the slot), or
// until the job's worker exits.

// Output names of the machine queue and of the organization wait alone.
const (
	// OutputMachineSlot is the machine slot held, 1..K ("" when
	// machine-slots is off or no slot is held).
	OutputMachineSlot = "machine-slot"
	// OutputMachineWaitSeconds is how long the job waited for its machine
	// slot, in seconds with millisecond precision ("" when off).
	OutputMachineWaitSeconds = "machine-wait-seconds"
	// OutputLockWaitSeconds is how long the job waited in the organization
	// queue alone (from holding its machine slot, or from the start when
	// machine-slots is off, to the outcome), in seconds. wait-ms stays the
	// whole acquire, machine wait included.
	OutputLockWaitSeconds = "lock-wait-seconds"
)

// machineSlot is the machine queue state of one acquire.
type machineSlot struct {
	owner mq.Process
	store *filestore.Store
	// joined: the marker was written and Take was called.
	joined bool
	// held: Take returned a grant; grant is it.
	held  bool
	grant filestore.Grant
	// from is when Take was called, heldAt when it returned a grant
	// (the organization wait starts there).
	from, heldAt time.Time
}

// machineOwner resolves the slot's owner before any request (nothing when
// machine-slots is off).
func (q *acquirer) machineOwner() error {
	if !q.s.Machine.On() {
		return nil
	}
	e := q.d.Machine
	self := e.SelfPID
	if self == 0 {
		self = os.Getpid()
	}
	owner, err := machineslot.FindOwner(e.TreeOrOS(), self)
	if err != nil {
		return err
	}
	q.machine = &machineSlot{owner: owner}
	return nil
}

// takeMachineSlot waits for a machine slot (nothing when off). ctx is the
// acquire's deadline-bound context.
func (q *acquirer) takeMachineSlot(ctx context.Context) error {
	m := q.machine
	if m == nil {
		return nil
	}
	st, err := q.d.Machine.Open(q.s.Machine.Dir, q.d.Clock)
	if err != nil {
		return err
	}
	m.store = st
	// The with-cleanup post step frees the slot too, if this step dies.
	q.registerPost()
	marker := machineslot.Marker{HolderID: q.id.HolderID, Dir: q.s.Machine.Dir, Owner: m.owner, Slots: q.s.Machine.Slots}
	if err := machineslot.WriteMarker(q.s.RunnerTemp, q.s.Target, marker); err != nil {
		q.a.Warning("Could not record the machine slot for this job's release step (the slot is freed when the job ends): " + err.Error())
	}
	q.a.Printf("Waiting for one of %d machine slot(s) in %s (owner: the job's %s, %s).", q.s.Machine.Slots, q.s.Machine.Dir, machineslot.WorkerName, m.owner)
	m.joined, m.from = true, q.now()
	g, err := st.Take(ctx, filestore.Request{HolderID: q.id.HolderID, Slots: q.s.Machine.Slots, Owner: m.owner})
	if err != nil {
		// A timeout or the runner's cancellation (machine-queue-cancelled,
		// ctx ended): Take removed the entry, and run() and Run report
		// the deadline or the cancellation as in the organization queue.
		return err
	}
	m.held, m.grant, m.heldAt = true, g, q.now()
	marker.Slot = g.Slot
	if err := machineslot.WriteMarker(q.s.RunnerTemp, q.s.Target, marker); err != nil {
		q.a.Warning("Could not record the machine slot for this job's release step (the slot is freed when the job ends): " + err.Error())
	}
	q.a.Printf("Holding machine slot %d of %d after %s s; joining the organization queue of %s.", g.Slot, g.Slots, seconds(m.heldAt.Sub(m.from)), q.s.Target.Lock)
	return nil
}

// freeMachineSlotAfterFailure frees the machine slot (or queue entry) of a
// failed acquire once the organization cleanup has run. It keeps the slot
// when the outcome says the organization may still record this job
// (admission-unknown, a failed cleanup): the always() release step frees
// the seat, then the slot (the marker tells it how); the job's end frees
// it otherwise.
func (q *acquirer) freeMachineSlotAfterFailure(ctx context.Context, err error) {
	m := q.machine
	if m == nil || !m.joined || err == nil {
		return
	}
	code := lockaction.ReasonCode(err)
	if code == resultAdmissionUnknown || strings.HasSuffix(code, "-cleanup-failed") {
		q.a.Warning(fmt.Sprintf("Keeping machine slot %s for the release step: the organization lock may still record this job (%s).", slotText(m), code))
		return
	}
	cctx, cancel := actionkit.CleanupContext(ctx, q.d.Signals, machineslot.FreeWindow)
	defer cancel()
	f, ferr := machineslot.Free(cctx, q.s.RunnerTemp, q.s.Target, q.id.HolderID, q.d.Machine, q.d.Clock)
	if ferr == nil && !f.Found {
		// No marker (a local run, or it could not be written): release
		// by what this process knows.
		_, ferr = m.store.Release(cctx, q.id.HolderID, m.owner)
	}
	if ferr != nil {
		q.a.Warning("Could not free the machine slot after the failed acquire (it is freed when the job ends): " + ferr.Error())
		return
	}
	if m.held {
		q.a.Printf("Freed machine slot %d after the failed acquire.", m.grant.Slot)
	}
}

func slotText(m *machineSlot) string {
	if !m.held {
		return "(queued)"
	}
	return strconv.Itoa(m.grant.Slot)
}

// machineOutputs are machine-slot, machine-wait-seconds and
// lock-wait-seconds at the outcome. machine-slot is set only when
// acquired: a failed acquire frees its slot before it exits.
func (q *acquirer) machineOutputs(acquired bool) [][2]string {
	slot, machineWait := "", ""
	orgFrom := q.started
	if m := q.machine; m != nil && m.joined {
		end := q.now()
		if m.held {
			end, orgFrom = m.heldAt, m.heldAt
			if acquired {
				slot = strconv.Itoa(m.grant.Slot)
			}
		}
		machineWait = seconds(end.Sub(m.from))
	}
	lockWait := ""
	if q.machine == nil || q.machine.held {
		lockWait = seconds(q.now().Sub(orgFrom))
	}
	return [][2]string{{OutputMachineSlot, slot}, {OutputMachineWaitSeconds, machineWait}, {OutputLockWaitSeconds, lockWait}}
}

// machineRows are the job summary rows of the machine queue.
func (q *acquirer) machineRows() []actionkit.Row {
	m := q.machine
	if m == nil || !m.joined {
		return nil
	}
	v := "queued, not held"
	if m.held {
		v = fmt.Sprintf("%d of %d, waited %s s", m.grant.Slot, m.grant.Slots, seconds(m.heldAt.Sub(m.from)))
		if m.grant.Position > 0 {
			v += fmt.Sprintf(" (position %d at joining)", m.grant.Position)
		}
	}
	return []actionkit.Row{{Field: "Machine slot", Value: markdown.Text(v) + " in " + markdown.Code(q.s.Machine.Dir)}}
}

// seconds formats d as seconds with millisecond precision ("1.250").
func seconds(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', 3, 64)
}

// postFreeMachineSlot frees the machine slot after the post step's
// organization cleanup succeeded (never fails: warnings only).
func postFreeMachineSlot(ctx context.Context, d Deps, a *actionio.IO, s Settings) {
	id := lockaction.IdentityFor(s.Run, s.Target, s.Identity.Suffix, s.Identity.RunnerID, "", d.Clock.Now())
	f, err := machineslot.Free(ctx, s.RunnerTemp, s.Target, id.HolderID, d.Machine, d.Clock)
	switch {
	case err != nil:
		a.Warning("Build-lock post cleanup could not free the machine slot (it is freed when the job ends): " + err.Error())
	case f.Found:
		a.Printf("Build-lock post cleanup: machine slot %s.", f.Decision.Outcome)
	}
}
