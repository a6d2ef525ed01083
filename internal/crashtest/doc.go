// Package crashtest cuts every lock action at every step boundary of its
// request sequence and applies each process fault there: SIGKILL, SIGINT
// (cancellation) and a stalled connection, with zero to three competing
// jobs. It is test-only: the enumeration lives in its _test files and is
// described in docs/crash-testing.md.
package crashtest
