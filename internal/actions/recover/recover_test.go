package recover_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/reap/reaptest"
	recoveraction "github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/recover"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// TestActionRunsTheSharedRecovery: the action is a thin wrapper; the
// recovery's behaviour is tested in internal/recovery.
func TestActionRunsTheSharedRecovery(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := reaptest.New(t, `{"maxHolders":1,"runnerSerialization":true,"resourceLifecycle":true}`)
		s := lockstate.Empty(reaptest.Lock)
		s.SchemaVersion, s.Reservations = 4, []lockstate.Reservation{}
		w.SeedState(s)
		w.Env["INPUT_OPERATION"] = "recover"
		w.Env["INPUT_RESERVATION_ID"] = "q-missing"
		w.Env["INPUT_RESOURCE_SAFE"] = "true"
		d := recoveraction.Deps{Getenv: func(k string) string { return w.Env[k] }, Stdout: w.Stdout, Transport: w.API}
		err := recoveraction.Run(context.Background(), d)
		assert.Equal(t, string(lockstate.CodeReservationNotFound), lockaction.ReasonCode(err))
		assert.Equal(t, lockaction.ExitFailure, recoveraction.Main(context.Background(), d, nil))
	})
}
