package actionio

import "fmt"

// RequireOutputFile fails when GITHUB_OUTPUT is unset. Most actions skip
// their outputs silently then (local runs); the classifier and the gates
// must not (spec §1.1): their safety rests on a fail-closed default written
// before anything else, and a default nobody can read is no default. The
// error wraps ErrFileCommandUnavailable.
func (a *IO) RequireOutputFile() error {
	if a.getenv("GITHUB_OUTPUT") == "" {
		return fmt.Errorf("GITHUB_OUTPUT is not set, so this action cannot write its fail-closed outputs: %w", ErrFileCommandUnavailable)
	}
	return nil
}
