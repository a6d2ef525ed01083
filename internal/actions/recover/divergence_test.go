package recover_test

// Tests that pin deliberate divergences of operator recovery from the
// JavaScript reference (reference-behavior.md §4.3, §4.4;
// docs/divergences.md).

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/recovery"
)

// TestRecoveryReadsTheStateAtTheBranchHead: the reference's first read is
// by branch name, which a lagging replica can answer with an older version;
// right after the quarantine was written, an operator's recover would then
// fail with "Active quarantine reservation <id> was not found". Recovery
// reads the branch head from the refs API and the file at that commit
// (store.LoadFresh), so a stale replica cannot hide the quarantine or the
// incident it was dispatched for.
func TestRecoveryReadsTheStateAtTheBranchHead(t *testing.T) {
	t.Parallel()
	for _, op := range []string{recovery.OperationRecover, recovery.OperationRecoverIncident} {
		t.Run(op, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := reaptest.New(t, cfgHealth)
				older := lockstate.Empty(reaptest.Lock)
				older.SchemaVersion = 5
				older.Reservations = []lockstate.Reservation{}
				older.UpdatedAt = lockstate.FormatTime(time.Now())
				w.SeedState(older) // the version a lagging replica still serves
				s := older.Clone()
				s.Reservations = []lockstate.Reservation{reservation("q1", "r1", lockstate.ReservationQuarantine, time.Now().Add(-time.Hour))}
				s.ActiveIncident = incident(t, "r3")
				w.SeedState(s)
				w.Em.AddFault(emulator.Fault{Method: "GET", PathPattern: "/repos/acme/build-lock/contents/" + reaptest.StatePath(), Kind: emulator.StaleRead})

				want := "Recover reservation q1"
				if op == recovery.OperationRecover {
					set(w, "INPUT_OPERATION", op, "INPUT_RESERVATION_ID", "q1", "INPUT_RESOURCE_SAFE", "true")
				} else {
					set(w, "INPUT_OPERATION", op, "INPUT_PORTAL_CLEANUP_CONFIRMED", "true")
					want = "Recover global incident " + s.ActiveIncident.IncidentID
				}
				require.NoError(t, recoveraction.Run(context.Background(), deps(w)))
				assert.Equal(t, []string{seedM, seedM, want}, w.Messages())
				assert.Equal(t, "true", w.Outputs()["reaped"])
			})
		})
	}
}
