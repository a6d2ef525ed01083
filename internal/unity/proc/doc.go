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
// exits on its own, the processes it started may keep writing to the
// output until end of file, for at most a drain window (the grace): on
// Windows the pipe's handles are inheritable, so a child of Unity.exe (its
// licensing client) inherits them and can write after the editor exited
// (Result.HeldOpen records one still holding the output at the end of the
// window). Then whatever the child left in its tree is killed, so a
// grandchild cannot hold the output open or outlive the step.
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
