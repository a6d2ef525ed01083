package store

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Rules of the store's refusals (RuleError.Rule).
const (
	// RuleStateBranchIsDefault refuses a state branch that is the lock
	// repository's default branch: lock writes would land on the reviewed
	// branch that holds locks/policy.json and the lock configs.
	RuleStateBranchIsDefault = "state-branch-is-default"
	// RuleLockNameCaseCollision refuses a lock name that differs only in
	// case from an existing lock's files, which would silently be a lock of
	// its own.
	RuleLockNameCaseCollision = "lock-name-case-collision"
)

// RuleError is a refusal of the store with a stable rule name. Its
// ReasonCode method makes it a lockaction.Reasoned error.
type RuleError struct {
	Rule, Message string
}

func (e *RuleError) Error() string { return e.Message + " (rule " + e.Rule + ")" }

// ReasonCode returns Rule.
func (e *RuleError) ReasonCode() string { return e.Rule }

// CheckStateBranch reads the lock repository once (GET /repos/{owner}/{repo},
// ETag-cached by the client) and refuses a state branch equal to its
// default_branch, before anything is written. GitHub compares branch names
// case-sensitively, but a case variant of the default branch is refused too:
// it can only be a mistake. A qualified name (refs/heads/<default>,
// heads/<default>) is the default branch too: GitHub resolves refs as git
// does (the actions refuse qualified names before this, lockaction
// AmbiguousBranchName).
func (s *Store) CheckStateBranch(ctx context.Context) error {
	def, err := s.defaultBranch(ctx)
	if err != nil {
		return err
	}
	short := strings.TrimPrefix(strings.TrimPrefix(s.opts.Branch, "refs/"), "heads/")
	if strings.EqualFold(def, s.opts.Branch) || strings.EqualFold(def, short) {
		return &RuleError{Rule: RuleStateBranchIsDefault, Message: fmt.Sprintf(
			"refusing state branch %q of %s/%s: it is the repository's default branch, which holds the reviewed lock configs and caller policy; lock state must live on its own branch (default %s)",
			s.opts.Branch, s.opts.Owner, s.opts.Repo, DefaultBranch)}
	}
	return nil
}

// defaultBranch returns the lock repository's default branch, read at most
// once per Store.
func (s *Store) defaultBranch(ctx context.Context) (string, error) {
	s.mu.Lock()
	def := s.defBranch
	s.mu.Unlock()
	if def != "" {
		return def, nil
	}
	gh := s.opts.Client.GitHub()
	var repo *github.Repository
	if err := s.opts.Client.Do(ctx, s.op("GET repository", false), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		repo, resp, err = gh.Repositories.Get(ctx, s.opts.Owner, s.opts.Repo)
		return resp, err
	}); err != nil {
		return "", err
	}
	def = repo.GetDefaultBranch()
	if def == "" {
		return "", fmt.Errorf("read %s/%s: the repository has no default_branch", s.opts.Owner, s.opts.Repo)
	}
	s.mu.Lock()
	s.defBranch, s.repoID = def, repo.GetID()
	s.mu.Unlock()
	return def, nil
}

// RepositoryID returns the lock repository's numeric id, read at most once
// per Store (with the default branch).
func (s *Store) RepositoryID(ctx context.Context) (int64, error) {
	if _, err := s.defaultBranch(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repoID, nil
}

// CheckLockNameCase lists locks/ on the default branch and on the state
// branch and refuses the lock name when another lock's config or state file
// has the same name up to case (locks/Demo.config.json beside lock "demo").
// It costs two directory reads, so callers run it only when the exact
// config file is missing: a lock with its own config file is a lock.
func (s *Store) CheckLockNameCase(ctx context.Context) error {
	for _, c := range []struct {
		ref, suffix, where string
	}{{"", ".config.json", "the default branch"}, {s.opts.Branch, ".json", "branch " + s.opts.Branch}} {
		names, err := s.listLocks(ctx, c.ref)
		if err != nil {
			return err
		}
		want := s.opts.Lock + c.suffix
		for _, n := range names {
			if n != want && strings.EqualFold(n, want) {
				other := strings.TrimSuffix(n, n[len(n)-len(c.suffix):])
				return &RuleError{Rule: RuleLockNameCaseCollision, Message: fmt.Sprintf(
					"refusing lock-name %q: locks/%s on %s belongs to lock %q, which differs only in case; lock names are case-sensitive, so this would silently be a separate one-seat lock (use lock-name: %s)",
					s.opts.Lock, n, c.where, other, other)}
			}
		}
	}
	return nil
}

// listLocks returns the file names in locks/ at ref ("" = default branch);
// a missing directory or branch is empty.
func (s *Store) listLocks(ctx context.Context, ref string) ([]string, error) {
	gh := s.opts.Client.GitHub()
	var dir []*github.RepositoryContent
	err := s.opts.Client.Do(ctx, s.op("GET contents locks/", false), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		_, dir, resp, err = gh.Repositories.GetContents(ctx, s.opts.Owner, s.opts.Repo, "locks", &github.RepositoryContentGetOptions{Ref: ref})
		return resp, err
	})
	if err != nil {
		if ghclient.IsNotFound(err) || ghclient.StatusOf(err) == http.StatusNotFound {
			return nil, nil
		}
		return nil, err
	}
	names := make([]string, 0, len(dir))
	for _, e := range dir {
		names = append(names, e.GetName())
	}
	return names, nil
}

// LoadFresh reads the state as of the state branch's head commit: the head
// from the refs API, then the file at that exact commit (contents with
// ?ref=<commit sha>). A read by commit SHA names one immutable version, so a
// lagging replica cannot answer it with an older one the way it can answer a
// read by branch name (spec Appendix B.5; the emulator's stale_read fault
// models this). Callers use it before concluding from an ordinary read that
// their own holder or entry is gone. The snapshot becomes the next Update's
// compare-and-swap base. A missing branch or file is the empty state.
func (s *Store) LoadFresh(ctx context.Context) (Snapshot, string, error) {
	gh := s.opts.Client.GitHub()
	var ref *github.Reference
	err := s.opts.Client.Do(ctx, s.op("GET git ref heads/"+s.opts.Branch, false), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		ref, resp, err = gh.Git.GetRef(ctx, s.opts.Owner, s.opts.Repo, "heads/"+s.opts.Branch)
		return resp, err
	})
	if err != nil {
		if ghclient.IsNotFound(err) {
			snap := Snapshot{State: lockstate.Empty(s.opts.Lock)}
			s.rememberHead(snap)
			return snap, "", nil
		}
		return Snapshot{}, "", err
	}
	commit := ref.GetObject().GetSHA()
	if commit == "" {
		return Snapshot{}, "", fmt.Errorf("read heads/%s of %s/%s: the reference names no commit", s.opts.Branch, s.opts.Owner, s.opts.Repo)
	}
	data, sha, err := s.readFile(ctx, s.StatePath(), commit)
	if err != nil {
		if ghclient.IsNotFound(err) {
			snap := Snapshot{State: lockstate.Empty(s.opts.Lock)}
			s.rememberHead(snap)
			return snap, commit, nil
		}
		return Snapshot{}, "", err
	}
	st, err := lockstate.Decode(data, lockstate.DecodeOptions{Lock: s.opts.Lock, ServerURL: s.opts.ServerURL})
	if err != nil {
		return Snapshot{}, "", fmt.Errorf("decode %s at %s: %w", s.StatePath(), shortSHA(sha), err)
	}
	snap := Snapshot{State: st, SHA: sha}
	s.rememberHead(snap)
	return snap, commit, nil
}
