package lockaction_test

// Tests that pin deliberate divergences of caller authorization from the
// JavaScript reference (docs/divergences.md).

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockaction"
)

// TestCallerLoginsCompareCaseInsensitively: GitHub logins and repository
// names are case-insensitive (the API and the web resolve Acme/Game and
// acme/game to one repository), so every comparison of a caller's owner or
// repository with the lock repository or the policy ignores case. The
// reference compares its hard-coded constants exactly. Ids are compared
// exactly wherever they are pinned: case never widens who is allowed.
func TestCallerLoginsCompareCaseInsensitively(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		set map[string]string
		pol lockaction.Policy
	}{
		"same owner in another case":        {map[string]string{"GITHUB_REPOSITORY": "ACME/game"}, lockaction.Policy{}},
		"lock repository in another case":   {map[string]string{"INPUT_LOCK-REPOSITORY": "Acme/Build-Lock"}, lockaction.Policy{}},
		"pinned owner id with another case": {map[string]string{"GITHUB_REPOSITORY": "Acme/game"}, lockaction.Policy{OwnerID: 7}},
		"allowed owner in another case": {map[string]string{"GITHUB_REPOSITORY": "Partner/game"},
			lockaction.Policy{AllowedOwners: []lockaction.AllowedOwner{{Login: "partner", ID: 7}}}},
		"allowed repository in another case": {map[string]string{"GITHUB_REPOSITORY": "acme/Game"},
			lockaction.Policy{AllowedRepositories: []lockaction.AllowedRepository{{Repository: "ACME/game", ID: 42}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := baseEnv()
			for k, v := range tc.set {
				env[k] = v
			}
			a, _ := io(env)
			_, err := parseTarget(a, tc.pol)
			require.NoError(t, err)
		})
	}
	t.Run("a pinned id still decides", func(t *testing.T) {
		t.Parallel()
		env := baseEnv()
		env["GITHUB_REPOSITORY"] = "Partner/game"
		a, _ := io(env)
		_, err := parseTarget(a, lockaction.Policy{AllowedOwners: []lockaction.AllowedOwner{{Login: "partner", ID: 8}}})
		assert.Equal(t, "caller-owner", lockaction.ReasonCode(err))
	})
}
