// Package prhead is the require-current-pr-head action ([Run]): it rejects a
// run whose pull request head moved on, before expensive setup. The check
// itself, which acquire runs too, lives below both actions in
// internal/prhead.
package prhead
