package store

import (
	"context"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// BranchExists reports whether the state branch exists, without creating
// it: a release or a reaper run that finds no branch has nothing to act on,
// and must not create one (the first write creates it, Update).
func (s *Store) BranchExists(ctx context.Context) (bool, error) {
	gh := s.opts.Client.GitHub()
	o, r, b := s.opts.Owner, s.opts.Repo, s.opts.Branch
	err := s.opts.Client.Do(ctx, s.op("GET git ref heads/"+b, false), func(ctx context.Context) (*github.Response, error) {
		_, resp, err := gh.Git.GetRef(ctx, o, r, "heads/"+b)
		return resp, err
	})
	switch {
	case err == nil:
		return true, nil
	case ghclient.IsNotFound(err):
		return false, nil
	}
	return false, err
}
