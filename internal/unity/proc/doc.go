// Package proc runs one external command as a controlled process tree: an
// exact argument vector and environment, combined stdout and stderr captured
// up to a byte cap, a timeout that terminates the whole tree, a grace period
// after which the tree is killed, and nothing the command started left
// running when Run returns.
//
// The tree is a process group on Unix (the child is its own group leader;
// termination is SIGTERM to the group, the kill SIGKILL) and a Job Object on
// Windows (the child is created suspended, assigned to a job with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and no breakaway, then resumed;
// termination and the kill are TerminateJobObject). When the direct child
// exits, whatever it left behind in its tree is killed, so a grandchild
// cannot hold the output pipe open or outlive the step.
//
// Timers are injected ([After]) so the timeout and grace rules are tested
// with real processes and no real waiting. The Windows job code compiles in
// CI (make cross) but its OS calls run only on a Windows runner; see
// docs/actions.md ("Operating-system calls never run in CI").
//
// Limits: on Unix a descendant that calls setsid() leaves the group and is
// not reached (Unix offers no unprivileged way to prevent it); Run still
// returns, because the drain of the output pipe is bounded by the grace.
package proc
