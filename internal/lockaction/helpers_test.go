package lockaction_test

import (
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// parseTarget is the target parse with its first problem.
func parseTarget(a *actionio.IO, pol lockaction.Policy) (lockaction.Target, error) {
	var p lockaction.Problems
	t := lockaction.ParseTargetWithPolicy(a.Getenv, pol, &p)
	return t, p.First()
}

// loadPolicy loads the policy of a's action checkout.
func loadPolicy(a *actionio.IO) (lockaction.Policy, error) {
	return lockaction.LoadPolicyFile(lockaction.ActionRoot(a.Getenv))
}

// identity builds the identity from a's run environment.
func identity(a *actionio.IO, t lockaction.Target, suffix, runnerID, jobID string, now time.Time) lockstate.Identity {
	var p lockaction.Problems
	return lockaction.IdentityFor(lockaction.ParseRun(a.Getenv, &p), t, suffix, runnerID, jobID, now)
}

// parseAppCredentials parses and masks the credentials, with the first
// problem.
func parseAppCredentials(a *actionio.IO, idVar, keyVar string) (lockaction.AppCredentials, error) {
	var p lockaction.Problems
	c := lockaction.ParseCredentials(a.Getenv, idVar, keyVar, &p)
	c.MaskIn(a)
	return c, p.First()
}
