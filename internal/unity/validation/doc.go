// Package validation holds the two pure Unity gates:
//
//   - [EvaluateValidation], the aggregate gate of require-unity-validation
//     (reference-behavior.md §1.12, unity-lifecycle-facts.md §7): a
//     skipped licensed job is accepted only as one of three complete,
//     modeled matrices of job results, and every other combination is
//     unsafe with a stable reason, the matrix the inputs came closest to
//     and the input that broke it;
//   - [CheckLicense], the local secret-shape check of validate-unity-license
//     (§1.13): serial activation only, no licensing server, and the three
//     Unity secrets present. It sees presence booleans, never a value.
//
// Both are table-tested over every row of their truth tables.
package validation
