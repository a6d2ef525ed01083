package ghclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"

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
	name := fmt.Sprintf("GET /orgs/%s/installation", a.org)
	if a.repoName != "" {
		name = fmt.Sprintf("GET /repos/%s/%s/installation", a.repoOwner, a.repoName)
	}
	var inst *github.Installation
	err := c.run(ctx, Op{Name: name, Budget: b}, true, func(actx context.Context) (*http.Response, error) {
		var (
			resp *github.Response
			err  error
		)
		if a.repoName != "" {
			inst, resp, err = a.jwtGitHub.Apps.FindRepositoryInstallation(actx, a.repoOwner, a.repoName)
		} else {
			inst, resp, err = a.jwtGitHub.Apps.FindOrganizationInstallation(actx, a.org)
		}
		if resp != nil {
			return resp.Response, err
		}
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	return inst, nil
}
