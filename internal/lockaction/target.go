// Package lockaction is the setup every lock action shares: which lock it
// targets and whether the caller may use it, the caller's run identity, the
// App credentials, the GitHub client and store built from them, and the
// process conventions (signal-aware context, exit codes 0/1/130/143).
//
// Everything that can be validated from inputs and the runner environment is
// validated here, before any credential is parsed or any request is sent, and
// each refusal names the rule it enforces.
package lockaction

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Defaults and limits of the target inputs.
const (
	// DefaultStateBranch is the branch carrying lock state (spec §2.1).
	DefaultStateBranch = "lock-state"
	// DefaultAPIURL and DefaultServerURL apply when the runner sets neither
	// GITHUB_API_URL nor GITHUB_SERVER_URL.
	DefaultAPIURL    = "https://api.github.com"
	DefaultServerURL = "https://github.com"
	// PolicyPath is the committed caller policy inside the action's own
	// checkout (the lock repository at the pinned commit).
	PolicyPath = "locks/policy.json"
)

var (
	lockNameRE    = regexp.MustCompile(`^[A-Za-z0-9._-]{1,80}$`)
	repositoryRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)
	stateBranchRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)
	canonicalIDRE = regexp.MustCompile(`^[1-9][0-9]*$`)
	// fullCommitIDRE is a SHA-1 or SHA-256 commit id.
	fullCommitIDRE = regexp.MustCompile(`^([0-9a-fA-F]{40}|[0-9a-fA-F]{64})$`)
)

// RefusalError is a validation refusal. Rule is a stable code an operator can
// search for; the message says what to change. It never contains a secret.
type RefusalError struct {
	Rule    string
	Message string
}

func (e *RefusalError) Error() string { return e.Message + " (rule " + e.Rule + ")" }

// ReasonCode is the refusal's rule.
func (e *RefusalError) ReasonCode() string { return e.Rule }

func refuse(rule, format string, args ...any) error {
	return &RefusalError{Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// Target is the lock an action operates on and where GitHub is.
type Target struct {
	// Owner and Repo name the lock repository.
	Owner, Repo string
	// Lock is the lock name; Branch the state branch.
	Lock, Branch string
	// APIURL is GITHUB_API_URL; ServerURL is GITHUB_SERVER_URL's origin.
	APIURL, ServerURL string
	// CallerOwnerID and CallerRepoID are the runner's
	// GITHUB_REPOSITORY_OWNER_ID and GITHUB_REPOSITORY_ID of the calling
	// repository; SameOwner is true when the caller was authorized as the
	// lock repository's own owner (by name: CheckOwnerPin then proves the
	// ids agree).
	CallerOwnerID, CallerRepoID int64
	SameOwner                   bool
}

// Repository returns "owner/repo" of the lock repository.
func (t Target) Repository() string { return t.Owner + "/" + t.Repo }

// Policy is the committed caller policy of a lock repository
// (locks/policy.json at the pinned commit). Without one, only repositories of
// the lock repository's own owner may use its locks.
type Policy struct {
	// OwnerID pins the lock repository owner's numeric id; callers of that
	// owner must present the same GITHUB_REPOSITORY_OWNER_ID.
	OwnerID int64 `json:"ownerId,omitempty"`
	// AllowedOwners lets repositories of other owners use the locks; each
	// entry pins the owner's login and numeric id.
	AllowedOwners []AllowedOwner `json:"allowedOwners,omitempty"`
	// AllowedRepositories, when non-empty, restricts callers to exactly these
	// repositories (login/name with numeric id).
	AllowedRepositories []AllowedRepository `json:"allowedRepositories,omitempty"`
}

// AllowedOwner is one owner other than the lock repository's own.
type AllowedOwner struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
}

// AllowedRepository is one allowed caller repository.
type AllowedRepository struct {
	Repository string `json:"repository"`
	ID         int64  `json:"id"`
}

// LoadPolicyFile reads the policy of the lock repository checkout at root
// (see ActionRoot). An empty root or no policy file means the zero Policy;
// a malformed file is an error (fail closed).
func LoadPolicyFile(root string) (Policy, error) {
	if root == "" {
		return Policy{}, nil
	}
	data, err := os.ReadFile(filepath.Join(root, PolicyPath))
	if errors.Is(err, os.ErrNotExist) {
		return Policy{}, nil
	}
	if err != nil {
		return Policy{}, refuse("policy-unreadable", "read the lock repository's caller policy %s: %v", PolicyPath, err)
	}
	if serr := lockstate.CheckStrictJSON(data); serr != nil {
		return Policy{}, refuse("policy-malformed", "the lock repository's caller policy %s is malformed: %s (%s at %s)", PolicyPath, serr.Detail, serr.Code, serr.Path)
	}
	var p Policy
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return Policy{}, refuse("policy-malformed", "the lock repository's caller policy %s is malformed: %v", PolicyPath, err)
	}
	return p, nil
}

// ValidateLockName refuses a lock name that is not 1-80 characters of
// A-Z a-z 0-9 . _ - (lock-name-pattern), or that names one of the
// repository's own locks/ files (lock-name-reserved).
func ValidateLockName(lock string) error {
	if !lockNameRE.MatchString(lock) || lock == "." || lock == ".." || strings.Contains(lock, "..") {
		return refuse("lock-name-pattern", "lock-name must be 1-80 characters of A-Z a-z 0-9 . _ - without \"..\"")
	}
	if reason := ReservedLockName(lock); reason != "" {
		return refuse("lock-name-reserved", "lock-name %q is reserved: %s", lock, reason)
	}
	return nil
}

// ValidateStateBranch refuses a state branch that is not a plain branch
// name (state-branch-pattern) or that GitHub could resolve to another ref
// (state-branch-ambiguous).
func ValidateStateBranch(branch string) error {
	if !stateBranchRE.MatchString(branch) || strings.Contains(branch, "..") || strings.HasSuffix(branch, "/") ||
		strings.HasSuffix(branch, ".lock") || strings.Contains(branch, "//") {
		return refuse("state-branch-pattern", "state-branch must be a plain branch name (letters, digits, . _ / -)")
	}
	if why := AmbiguousBranchName(branch); why != "" {
		return refuse("state-branch-ambiguous", "state-branch %q %s; give the branch's own short name (default %s)", branch, why, DefaultStateBranch)
	}
	return nil
}

// AmbiguousBranchName says why GitHub could resolve branch to something
// other than the branch of that short name ("" when it cannot): the
// contents API resolves its ref parameter as git does, so "refs/heads/main"
// and "heads/main" are the branch main (and would slip past the default-
// branch refusal, which compares short names), "tags/…", "remotes/…" and
// "refs/…" name other refs, "HEAD" is the default branch, and a full
// commit id is that commit.
func AmbiguousBranchName(branch string) string {
	first, _, _ := strings.Cut(branch, "/")
	switch {
	case first == "refs" || first == "heads" || first == "tags" || first == "remotes":
		return "is a qualified ref, which GitHub resolves as git does (refs/heads/main is the branch main)"
	case strings.EqualFold(branch, "HEAD"):
		return "is HEAD, the default branch"
	case fullCommitIDRE.MatchString(branch):
		return "has the form of a full commit id"
	}
	return ""
}

// ReservedLockName says why lock cannot name a lock ("" when it can): its
// state file locks/<lock>.json would be one of the lock repository's own
// files under locks/ (case-insensitively, as a checkout on Windows or macOS
// would see them). "policy" is locks/policy.json, the caller policy;
// "<name>.config" is locks/<name>.config.json, a lock config; "README" and
// "example" prefixes are the documentation files. A writer App that may
// write lock state must never be pointed at those paths, on any branch.
func ReservedLockName(lock string) string {
	l := strings.ToLower(lock)
	switch {
	case l == "policy":
		return "locks/policy.json is the lock repository's caller policy"
	case strings.HasSuffix(l, ".config"):
		return "locks/<name>.config.json files are lock configs"
	case l == "readme" || strings.HasPrefix(l, "readme."):
		return "locks/README files document the lock directory"
	}
	return ""
}

func splitRepository(repo string) (string, string, error) {
	if !repositoryRE.MatchString(repo) {
		return "", "", fmt.Errorf("%q is not OWNER/NAME", repo)
	}
	owner, name, _ := strings.Cut(repo, "/")
	for _, seg := range []string{owner, name} {
		if seg == "." || seg == ".." {
			return "", "", fmt.Errorf("%q has a dot segment", repo)
		}
	}
	return owner, name, nil
}

// Caller is the calling repository as the runner reports it
// (GITHUB_REPOSITORY, GITHUB_REPOSITORY_ID, GITHUB_REPOSITORY_OWNER_ID).
type Caller struct {
	// Repository is OWNER/NAME; Owner its owner login.
	Repository, Owner string
	// RepoID and OwnerID are the canonical numeric ids.
	RepoID, OwnerID int64
}

// parseCaller validates the caller variables (raw values, untrimmed),
// appending every problem to p.
func parseCaller(repository, repoID, ownerID string, p *Problems) (Caller, bool) {
	c := Caller{Repository: strings.TrimSpace(repository)}
	ok := true
	owner, _, err := splitRepository(c.Repository)
	if err != nil {
		p.Add(refuse("caller-repository", "GITHUB_REPOSITORY must name the calling OWNER/NAME: %v", err))
		ok = false
	}
	c.Owner = owner
	for _, f := range [...]struct {
		name, raw string
		dst       *int64
	}{{"GITHUB_REPOSITORY_ID", repoID, &c.RepoID}, {"GITHUB_REPOSITORY_OWNER_ID", ownerID, &c.OwnerID}} {
		id, err := canonicalID(f.name, f.raw)
		if err != nil {
			p.Add(err)
			ok = false
		}
		*f.dst = id
	}
	return c, ok
}

// authorizeCaller enforces that the calling repository belongs to the lock
// repository's owner (owner id pinned by the policy when it has one), or is
// allowed by the committed policy. The ids come from the runner
// (GITHUB_REPOSITORY_ID, GITHUB_REPOSITORY_OWNER_ID) and must be canonical.
func authorizeCaller(c Caller, t *Target, p Policy) error {
	caller, callerOwner, repoID, ownerID := c.Repository, c.Owner, c.RepoID, c.OwnerID
	t.CallerOwnerID, t.CallerRepoID = ownerID, repoID
	if len(p.AllowedRepositories) > 0 {
		for _, r := range p.AllowedRepositories {
			if strings.EqualFold(r.Repository, caller) && r.ID == repoID {
				return nil
			}
		}
		return refuse("caller-not-allowed", "repository %s (id %d) is not in the lock repository's allowedRepositories policy", caller, repoID)
	}
	if strings.EqualFold(callerOwner, t.Owner) {
		if p.OwnerID != 0 && p.OwnerID != ownerID {
			return refuse("caller-owner-id", "owner %s has id %d, but the lock repository's policy pins owner id %d", callerOwner, ownerID, p.OwnerID)
		}
		t.SameOwner = true
		return nil
	}
	for _, o := range p.AllowedOwners {
		if strings.EqualFold(o.Login, callerOwner) && o.ID == ownerID {
			return nil
		}
	}
	return refuse("caller-owner", "repository %s belongs to %s, not to the lock repository's owner %s; add the owner to %s in the lock repository to allow it",
		caller, callerOwner, t.Owner, PolicyPath)
}

func canonicalID(name, raw string) (int64, error) {
	raw = strings.TrimSpace(raw)
	if !canonicalIDRE.MatchString(raw) {
		return 0, refuse("caller-ids", "%s must be a canonical positive decimal (the runner sets it)", name)
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, refuse("caller-ids", "%s is out of range", name)
	}
	return id, nil
}

// CheckOwnerPin proves what a same-owner authorization only compared by
// login: the lock repository's owner, as GitHub names it in the writer App's
// installation (the installation lookup every App-authenticated run makes
// first, so this costs no request), has the numeric id the runner reports
// for the caller's owner (GITHUB_REPOSITORY_OWNER_ID). Logins can be
// renamed and re-registered; ids cannot. Run it after the client's first
// request and before any write. It refuses (rule caller-owner-id) a
// mismatch and an installation whose account is not the lock repository's
// owner; a token client, which has no installation, is not checked.
func CheckOwnerPin(t Target, c *ghclient.Client) error {
	login, id, ok := c.InstallationAccount()
	if !ok {
		return nil
	}
	if !strings.EqualFold(login, t.Owner) {
		return refuse("caller-owner-id", "the writer App's installation for %s belongs to %s, not to the repository's owner %s", t.Repository(), login, t.Owner)
	}
	if t.SameOwner && t.CallerOwnerID != id {
		return refuse("caller-owner-id", "the calling repository's owner has id %d (GITHUB_REPOSITORY_OWNER_ID), but the lock repository's owner %s has id %d: same login, different account", t.CallerOwnerID, login, id)
	}
	return nil
}
