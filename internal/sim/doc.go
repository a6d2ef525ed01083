// Package sim is the seeded, fault-injected simulation of the build lock
// (reliability goals R-S*, R-L2, R-F*, R-C1, R-V2, R-T1/R-T2; see
// docs/simulation.md). One seed decides everything: the lock config and
// schema path, the jobs (repositories, runners, matrix legs, reruns, pull
// request heads that move), when and how each job dies, the fault schedule
// and the runners' clock offsets. The REAL acquire, release,
// acquire-with-cleanup post step, scheduled reaper and operator recovery
// run in-process through their Run functions against the GitHub emulator's
// in-memory transport, inside a testing/synctest bubble, so hours of
// virtual time take a fraction of a second.
//
// After every run internal/checker audits every committed version of the
// state file, and the simulation adds the checks that need ground truth:
// who wrote each version (attributed by the PUT body each process sent),
// whether the reaper's removals were backed by a terminal run, whether
// acquired=true was backed by a committed holder entry, Retry-After
// compliance per token, and the secret scan. A liveness phase follows the
// fault window.
package sim
