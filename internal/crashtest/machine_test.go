package crashtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"testing"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// cfgByMachine is a schema-6 lock of two seats serialized by machine
// (issue 26).
const cfgByMachine = `{"maxHolders":2,"runnerSerialization":true,"resourceLifecycle":true,"accountHealth":true,"fencedAdmission":true,"releaseCooldownSeconds":30,"maxOvertakes":2,"serializeBy":"machine"}`

// crashMachineID is every job's machine id: the agents runner-q and
// runner-v share one machine, every other runner is a machine of its own.
func crashMachineID(runner string) func(context.Context, int64) (string, error) {
	if runner == "runner-q" {
		runner = "runner-v"
	}
	sum := sha256.Sum256([]byte("crashtest-machine:" + runner))
	id := hex.EncodeToString(sum[:16])
	return func(context.Context, int64) (string, error) { return id, nil }
}

// setupAcquireByMachine: a holder on runner-h (its own machine) and the
// quarantine of a job on runner-q fill both seats; the victim runs on
// runner-v, a sibling agent of runner-q's machine, and reclaims the
// machine's quarantine in one admission write.
func setupAcquireByMachine(ctx context.Context, t testing.TB, w *world) *victim {
	h := w.job("holder", "runner-h")
	must(t, "holder acquires", w.acquire(ctx, h))
	q := w.job("quarantined", "runner-q")
	must(t, "sibling acquires", w.acquire(ctx, q))
	must(t, "sibling releases without a cleanup report", w.release(ctx, q, nil))
	w.finish(q, "failure")
	s := w.State()
	require.Len(t, s.Reservations, 1, "setup: the sibling's seat is quarantined")
	require.Equal(t, lockstate.ReservationQuarantine, s.Reservations[0].State)
	v := w.job("victim", "runner-v")
	return jobVictim(v, func(ctx context.Context, tr http.RoundTripper) error {
		return acquire.Run(ctx, deps(v, tr))
	})
}
