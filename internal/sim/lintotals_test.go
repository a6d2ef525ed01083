package sim_test

import (
	"fmt"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/linearizability"
)

// linTotals sums the linearizability checks of a tier.
type linTotals struct {
	histories, linearizable, ops, writes, unknown, refused, claims int
	// notModelled counts the seat seeds, whose history the check skips
	// (no verdict: the model knows anonymous FIFO seats only).
	notModelled     int
	steps, maxSteps int64
}

func (l *linTotals) add(r linearizability.Result) {
	if r.Verdict == "" {
		l.notModelled++
		return
	}
	l.histories++
	if r.OK() {
		l.linearizable++
	}
	l.ops += r.Operations
	l.writes += r.Writes
	l.unknown += r.UnknownWrites
	l.refused += r.RefusedWrites
	l.claims += r.Claims
	l.steps += r.Steps
	l.maxSteps = max(l.maxSteps, r.Steps)
}

func (l linTotals) String() string {
	return fmt.Sprintf("linearizability (porcupine): histories=%d linearizable=%d operations=%d writes=%d (unknown outcome %d, refused %d) claims=%d model-steps=%d (max %d in one seed); seat seeds not modelled=%d",
		l.histories, l.linearizable, l.ops, l.writes, l.unknown, l.refused, l.claims, l.steps, l.maxSteps, l.notModelled)
}
