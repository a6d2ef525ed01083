package enroll

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/snapshot"
)

// ErrRegistry marks a registry that cannot be read or is invalid (exit 2:
// a policy error, not drift).
var ErrRegistry = errors.New("enroll: registry unavailable or invalid")

// ClientFor returns a GitHub client that can read one repository (the
// reader App's installation token scoped to exactly that repository with
// contents: read). An error means the repository cannot be read.
type ClientFor func(ctx context.Context, repository string) (*ghclient.Client, error)

// Auditor runs the organization audit.
type Auditor struct {
	// LockRepository is "owner/name" of the lock repository; its owner is
	// the organization.
	LockRepository string
	// Registry is the validated registry.
	Registry *registry.Registry
	// Reader returns the client for one enrolled repository.
	Reader ClientFor
	// Now is the audit's clock (exception expiry).
	Now func() time.Time
}

// Audit reads every registered repository at the exact head commit of its
// registered default branch, analyzes it, revalidates every head after the
// analysis, and returns the artifact. Retrieval failures are findings of
// the repository, never an error; only a canceled ctx is.
func (a *Auditor) Audit(ctx context.Context) (*Artifact, error) {
	art := &Artifact{SchemaVersion: ArtifactSchema, LockRepository: a.LockRepository}
	now := a.Now()
	clients := map[string]*ghclient.Client{}
	client := func(repo string) (*ghclient.Client, error) {
		key := strings.ToLower(repo)
		if c, ok := clients[key]; ok {
			return c, nil
		}
		if _, ok := a.Registry.Lookup(repo); !ok {
			return nil, snapshot.ErrNotFound
		}
		c, err := a.Reader(ctx, repo)
		if err != nil {
			return nil, err
		}
		clients[key] = c
		return c, nil
	}
	heads := map[string]string{}
	for _, row := range a.Registry.Repositories {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sha := a.auditOne(ctx, art, row, client, now)
		heads[row.Repository] = sha
		art.Repositories = append(art.Repositories, RepositoryRow{Repository: row.Repository, SHA: sha})
	}
	// Revalidate: a head that moved while the audit ran means the report
	// describes a commit that is no longer the default branch.
	for _, row := range a.Registry.Repositories {
		sha := heads[row.Repository]
		if sha == "" {
			continue
		}
		c, err := client(row.Repository)
		if err != nil {
			continue
		}
		owner, name, _ := registry.SplitRepository(row.Repository)
		info, err := snapshot.ResolveHead(ctx, c, owner, name, row.DefaultBranch)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil || info.Head != sha {
			art.Findings = append(art.Findings, FindingRow{Repository: row.Repository, SHA: sha, Code: policy.RepositoryRetrievalIncomplete, Detail: snapshot.ReasonMovedHead})
		}
	}
	art.finish()
	return art, nil
}

// auditOne audits one repository and returns the commit read ("" when
// none could be).
func (a *Auditor) auditOne(ctx context.Context, art *Artifact, row registry.Repository, client func(string) (*ghclient.Client, error), now time.Time) string {
	retrieval := func(sha, detail string) {
		art.Findings = append(art.Findings, FindingRow{Repository: row.Repository, SHA: sha, Code: policy.RepositoryRetrievalIncomplete, Detail: detail})
	}
	owner, name, _ := registry.SplitRepository(row.Repository)
	c, err := client(row.Repository)
	if err != nil {
		retrieval("", readReason(err))
		return ""
	}
	info, err := snapshot.ResolveHead(ctx, c, owner, name, row.DefaultBranch)
	if err != nil {
		retrieval("", readReason(err))
		return ""
	}
	if info.DefaultBranch != row.DefaultBranch {
		retrieval(info.Head, snapshot.ReasonBranch)
	}
	if info.Fork != row.Fork {
		retrieval(info.Head, snapshot.ReasonForkChanged)
	}
	src, err := snapshot.NewGitHub(ctx, c, owner, name, info.Head)
	if err != nil {
		retrieval(info.Head, readReason(err))
		return info.Head
	}
	remote := func(ctx context.Context, o, r, commit, p string) ([]byte, error) {
		rc, err := client(o + "/" + r)
		if err != nil {
			return nil, err
		}
		rs, err := snapshot.NewGitHub(ctx, rc, o, r, commit)
		if err != nil {
			return nil, err
		}
		return rs.Read(ctx, p)
	}
	snap, err := snapshot.Load(ctx, row.Repository, info.Head, src, remote)
	if err != nil {
		retrieval(info.Head, readReason(err))
		return info.Head
	}
	pol, _ := policy.PolicyFor(a.Registry, a.LockRepository, row.Repository, now)
	res := policy.Analyze(snap, pol)
	for _, r := range res.Inventory {
		art.Inventory = append(art.Inventory, InventoryRow{Repository: row.Repository, SHA: info.Head, Path: safePath(r.Path), Job: safeJob(r.Job), Classification: r.Class})
	}
	for _, f := range res.Findings {
		fr := FindingRow{Repository: row.Repository, SHA: info.Head, Code: f.Code, Line: f.Line, Detail: f.Detail}
		if f.Path != "" {
			fr.Path = safePath(f.Path)
		}
		if f.Job != "" {
			fr.Job = safeJob(f.Job)
		}
		if fr.Detail != "" && !detailRE.MatchString(fr.Detail) {
			fr.Detail = ""
		}
		art.Findings = append(art.Findings, fr)
	}
	return info.Head
}

// readReason maps a read error to a source-free reason.
func readReason(err error) string {
	switch {
	case errors.Is(err, snapshot.ErrNotFound), ghclient.IsNotFound(err):
		return snapshot.ReasonNotFound
	case ghclient.IsCredentialFailure(err), ghclient.StatusOf(err) == http.StatusUnprocessableEntity, ghclient.StatusOf(err) == http.StatusForbidden:
		return snapshot.ReasonNoAccess
	case errors.Is(err, snapshot.ErrTruncated):
		return snapshot.ReasonTruncated
	case errors.Is(err, snapshot.ErrTooLarge):
		return snapshot.ReasonTooLarge
	default:
		return snapshot.ReasonUnreadable
	}
}

// safePath keeps a path that matches the artifact's alphabet, and
// replaces any other by a stable digest (a workflow file name is the
// consumer's text: it never reaches the issue unvalidated).
func safePath(p string) string {
	if pathRE.MatchString(p) {
		return p
	}
	sum := sha256.Sum256([]byte(p))
	return "unsafe-path-" + hex.EncodeToString(sum[:6])
}

func safeJob(j string) string {
	if jobRE.MatchString(j) {
		return j
	}
	sum := sha256.Sum256([]byte(j))
	return "unsafe_job_" + hex.EncodeToString(sum[:6])
}

// ReadRegistry reads the registry from the lock repository's branch ref
// ("" = default branch) through the Contents API, capped at
// registry.MaxBytes, and decodes it for the lock repository's owner.
func ReadRegistry(ctx context.Context, client *ghclient.Client, lockRepository, ref string) (*registry.Registry, error) {
	owner, name, ok := registry.SplitRepository(lockRepository)
	if !ok {
		return nil, fmt.Errorf("%w: lock repository %q is not owner/name", ErrRegistry, lockRepository)
	}
	u := fmt.Sprintf("repos/%s/%s/contents/%s", url.PathEscape(owner), url.PathEscape(name), registry.Path)
	if ref != "" {
		u += "?ref=" + url.QueryEscape(ref)
	}
	data, err := snapshot.GetRaw(ctx, client, "GET raw contents "+registry.Path, u, registry.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s from %s: %v", ErrRegistry, registry.Path, lockRepository, err)
	}
	reg, err := registry.Decode(data, registry.DecodeOptions{Organization: owner})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRegistry, err)
	}
	return reg, nil
}
