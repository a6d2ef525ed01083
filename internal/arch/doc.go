// Package arch holds no code: its test reads the module's import graph
// (go list -json) and enforces the layering docs/architecture.md draws.
package arch
