package githubissue_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
)

// A renamed repository: GitHub redirects the old name to /repositories/{id};
// the issue client follows it to the same repository id and its fence
// accepts the answer and the issues that name the new name.
func TestRenamedRepositoryPassesTheFence(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *githubissue.Options) { o.Client.PinRepository(owner, repo, 2002) }, nil)
	_, err := f.em.CreateIssue(owner, repo, bot, "ops: test alert", marker+"\nold", "open")
	require.NoError(t, err)
	require.NoError(t, f.em.RenameRepo(owner, repo, "build-lock-renamed"))
	res, err := f.ic.Sync(context.Background(), spec("new", githubissue.Open))
	require.NoError(t, err)
	assert.Equal(t, githubissue.ActionUpdated, res.Action)
	assert.Positive(t, f.em.Metrics().Redirects)
}

// A redirect to any other repository id is refused before anything is
// sent there: nothing is read or written.
func TestRedirectToAnotherRepositoryIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(o *githubissue.Options) { o.Client.PinRepository(owner, repo, 9999) }, nil) // configured: another repository
	_, err := f.em.CreateIssue(owner, repo, bot, "ops: test alert", marker+"\nold", "open")
	require.NoError(t, err)
	require.NoError(t, f.em.RenameRepo(owner, repo, "build-lock-renamed"))
	_, err = f.ic.Sync(context.Background(), spec("new", githubissue.Open))
	require.Error(t, err)
	var ge *ghclient.Error
	require.ErrorAs(t, err, &ge)
	assert.Equal(t, ghclient.CodeRedirectRefused, ge.Code)
	assert.Zero(t, f.writes())
}
