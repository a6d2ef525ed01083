package githubissue

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// A renamed repository. GitHub redirects /repos/{owner}/{old}/... to
// /repositories/{id}/..., and ghclient follows such a redirect only to the
// repository id it knows for owner/old (ghclient.PinRepository, or the
// first redirect's). The fence then accepts an answer served from
// /repositories/<that id>/<the wanted rest>, and the issues in it, which
// name the repository by its new name (read once from
// GET /repositories/{id}).

// sameRepository reports whether served is the /repositories/{id} form of
// want for the id ghclient followed the redirect to.
func (c *Client) sameRepository(served, want string) (int64, bool) {
	id, ok := c.opts.Client.RepositoryID(c.opts.Owner, c.opts.Repo)
	if !ok {
		return 0, false
	}
	i := strings.Index(served, "/repositories/")
	if i < 0 {
		return 0, false
	}
	t, err := ghclient.ParseRepositoryRedirect(want, served[i:])
	if err != nil || t.ID != id || !strings.EqualFold(t.Owner, c.opts.Owner) || !strings.EqualFold(t.Name, c.opts.Repo) {
		return 0, false
	}
	return id, true
}

// learnRename reads the repository's current name once, by id.
func (c *Client) learnRename(ctx context.Context, id int64) error {
	c.mu.Lock()
	known := c.renamed != ""
	c.mu.Unlock()
	if known {
		return nil
	}
	gh := c.opts.Client.GitHub()
	var repo *github.Repository
	err := c.opts.Client.Do(ctx, c.op(fmt.Sprintf("GET repositories/%d", id), false), func(ctx context.Context) (*github.Response, error) {
		r, resp, err := gh.Repositories.GetByID(ctx, id)
		repo = r
		return resp, err
	})
	if err != nil {
		return fmt.Errorf("githubissue: read renamed repository %d: %w", id, err)
	}
	if repo.GetID() != id || repo.GetFullName() == "" {
		return fmt.Errorf("%w: repository %d answered as %d (%s)", ErrFence, id, repo.GetID(), repo.GetFullName())
	}
	c.mu.Lock()
	c.renamed = repo.GetFullName()
	c.mu.Unlock()
	return nil
}

// isRenamed reports whether a repository_url names the renamed repository.
func (c *Client) isRenamed(u string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.renamed != "" && pathIs(u, "/repos/"+c.renamed)
}
