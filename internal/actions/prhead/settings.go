package prhead

import (
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/prhead"
)

// Settings are everything the require-current-pr-head action reads from its
// environment, parsed and validated once by LoadSettings before any
// request. Nothing below Run reads the environment.
type Settings struct {
	// Inputs are github-token, pull-request-number and expected-head-sha,
	// GITHUB_EVENT_NAME and GITHUB_REPOSITORY, with the API URL
	// (GITHUB_API_URL, the self-test emulator's for a local action only,
	// else the public default).
	Inputs prhead.Inputs
}

// LoadSettings parses the guard's inputs. For a pull request run every
// invalid one is listed in one *lockaction.SettingsError (its reason code is
// the first problem's). The token is in Inputs.Request.Token whatever the
// outcome, for the caller to mask.
func LoadSettings(getenv func(string) string) (Settings, error) {
	in, err := prhead.ParseInputs(getenv, prhead.APIURLOf(lockaction.Inputs(getenv).APIURL()))
	var p lockaction.Problems
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			p.Add(e)
		}
	} else {
		p.Add(err)
	}
	return Settings{Inputs: in}, p.Err()
}
