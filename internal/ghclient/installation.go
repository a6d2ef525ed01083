package ghclient

import (
	"context"
	"errors"

	"github.com/google/go-github/v66/github"
)

// Installation returns the GitHub App installation an App client mints its
// tokens from, as GitHub describes it (permissions, repository selection):
// GET /repos/{owner}/{repo}/installation for Config.InstallationRepository,
// else GET /orgs/{owner}/installation, authenticated with the App's JWT and
// run under the retry contract. A 404 (the App is not installed there)
// comes back as an *Error with Status 404. It fails for a token client.
func (c *Client) Installation(ctx context.Context, b Budget) (*github.Installation, error) {
	a := c.app
	if a == nil {
		return nil, errors.New("ghclient: Installation needs a GitHub App client")
	}
	inst, _, err := a.lookupInstallation(ctx, b)
	return inst, err
}
