// Package requirevalidation is the require-unity-validation action
// (cmd/require-unity-validation; reference-behavior.md §1.12,
// unity-lifecycle-facts.md §7): the always-reporting aggregate job's gate.
// It writes validation-safe=false first, evaluates the exact needs results
// with the pure rule internal/unity/validation.EvaluateValidation, and turns
// the output to true only for one of the three accepted matrices. Anything
// else fails the step, naming the matrix the results came closest to and
// the input that broke it.
package requirevalidation
