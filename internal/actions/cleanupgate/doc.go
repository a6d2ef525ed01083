// Package cleanupgate is the require-confirmed-unity-cleanup action
// (reference-behavior §1.11): the final gate of a licensed job, which fails
// the job unless its seat was proven clean. cleanup-safe=false is written
// first; the rules are internal/unity/cleanup.Evaluate. A safe job under an
// active account incident passes with a warning (the incident still blocks
// every new admission).
package cleanupgate
