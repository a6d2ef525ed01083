package demo

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actions/acquire"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/emulator"
)

// fidelity turns on GitHub's replica lag and branch-head conflicts
// (docs/emulator.md) at their realistic values, compressed like the rest of
// the demo: the demo polls every opts.Poll where production polls every
// acquire.DefaultPollSeconds, and GitHub's 10 s of lag and 500 ms commits
// shrink by the same factor.
func fidelity(o emulator.Options, opts Options) emulator.Options {
	scale := float64(opts.Poll) / float64(time.Duration(acquire.DefaultPollSeconds)*time.Second)
	o.ReplicaLag = time.Duration(float64(emulator.DefaultReplicaLag) * scale)
	o.ReplicaLagFraction = emulator.DefaultReplicaLagFraction
	o.CommitLatency = time.Duration(float64(emulator.DefaultCommitLatency) * scale)
	return o
}

// settle waits out the (compressed) replica lag after seeding, so the demo
// starts on a lock whose files every replica has, as a lock in use has.
func settle(opts Options) { time.Sleep(fidelity(emulator.Options{}, opts).ReplicaLag) }
