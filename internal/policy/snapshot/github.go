package snapshot

import (
	"context"
	"crypto/sha1" //nolint:gosec // git object ids are SHA-1 by definition
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// DefaultRequestTimeout bounds each HTTP attempt of the GitHub reader.
const DefaultRequestTimeout = 20 * time.Second

var commitRE = regexp.MustCompile(`^[0-9a-f]{40}$`)

// Repo is what GitHub reports about a repository and its default branch.
type Repo struct {
	// FullName is the canonical "owner/name".
	FullName string
	// DefaultBranch is the repository's default branch.
	DefaultBranch string
	// Fork is GitHub's fork flag.
	Fork bool
	// Head is the 40-hex commit the branch points at.
	Head string
}

// ResolveHead reads the repository's metadata and the head commit of
// branch ("" means the repository's default branch) through client. Every
// call goes through ghclient's retry contract.
func ResolveHead(ctx context.Context, client *ghclient.Client, owner, repo, branch string) (Repo, error) {
	gh := client.GitHub()
	var r *github.Repository
	err := client.Do(ctx, ghclient.Op{Name: "GET repository " + owner + "/" + repo}, func(ctx context.Context) (*github.Response, error) {
		actx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
		got, resp, err := gh.Repositories.Get(actx, owner, repo)
		r = got
		return resp, err
	})
	if err != nil {
		return Repo{}, notFoundAs(err)
	}
	info := Repo{FullName: r.GetFullName(), DefaultBranch: r.GetDefaultBranch(), Fork: r.GetFork()}
	if branch == "" {
		branch = info.DefaultBranch
	}
	var ref *github.Reference
	err = client.Do(ctx, ghclient.Op{Name: "GET ref heads/" + branch + " of " + owner + "/" + repo}, func(ctx context.Context) (*github.Response, error) {
		actx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
		got, resp, err := gh.Git.GetRef(actx, owner, repo, "heads/"+branch)
		ref = got
		return resp, err
	})
	if err != nil {
		return info, notFoundAs(err)
	}
	info.Head = ref.GetObject().GetSHA()
	if ref.GetObject().GetType() != "commit" || !commitRE.MatchString(info.Head) {
		return info, fmt.Errorf("snapshot: heads/%s of %s/%s is not a 40-hex commit", branch, owner, repo)
	}
	return info, nil
}

func notFoundAs(err error) error {
	if ghclient.IsNotFound(err) {
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	}
	return err
}

// GitHub is a Source over one commit of a repository, read through the
// Git database API: the commit's tree, one directory at a time
// (non-recursive trees, so a large repository is never truncated where it
// matters, and a truncated listing is ErrTruncated, never a partial view),
// and blobs by id, each checked against its id.
type GitHub struct {
	client      *ghclient.Client
	owner, repo string
	commit      string
	root        string
	dirs        map[string][]*github.TreeEntry
}

// NewGitHub resolves commit's tree. The commit must be 40 hex.
func NewGitHub(ctx context.Context, client *ghclient.Client, owner, repo, commit string) (*GitHub, error) {
	if !commitRE.MatchString(commit) {
		return nil, fmt.Errorf("snapshot: commit %q is not 40 lowercase hex", commit)
	}
	g := &GitHub{client: client, owner: owner, repo: repo, commit: commit, dirs: map[string][]*github.TreeEntry{}}
	var c *github.Commit
	err := client.Do(ctx, ghclient.Op{Name: "GET commit " + commit + " of " + owner + "/" + repo}, func(ctx context.Context) (*github.Response, error) {
		actx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
		got, resp, err := client.GitHub().Git.GetCommit(actx, owner, repo, commit)
		c = got
		return resp, err
	})
	if err != nil {
		return nil, notFoundAs(err)
	}
	g.root = c.GetTree().GetSHA()
	if !commitRE.MatchString(g.root) {
		return nil, fmt.Errorf("snapshot: commit %s of %s/%s has no tree", commit, owner, repo)
	}
	return g, nil
}

func (g *GitHub) tree(ctx context.Context, dir, sha string) ([]*github.TreeEntry, error) {
	if es, ok := g.dirs[dir]; ok {
		return es, nil
	}
	var t *github.Tree
	err := g.client.Do(ctx, ghclient.Op{Name: "GET tree " + sha + " of " + g.owner + "/" + g.repo}, func(ctx context.Context) (*github.Response, error) {
		actx, cancel := context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
		got, resp, err := g.client.GitHub().Git.GetTree(actx, g.owner, g.repo, sha, false)
		t = got
		return resp, err
	})
	if err != nil {
		return nil, notFoundAs(err)
	}
	if t.GetTruncated() {
		return nil, ErrTruncated
	}
	g.dirs[dir] = t.Entries
	return t.Entries, nil
}

// dirEntries lists dir by walking the trees from the root.
func (g *GitHub) dirEntries(ctx context.Context, dir string) ([]*github.TreeEntry, error) {
	es, err := g.tree(ctx, "", g.root)
	if err != nil || dir == "" {
		return es, err
	}
	cur := ""
	for _, seg := range strings.Split(dir, "/") {
		var next *github.TreeEntry
		for _, e := range es {
			if e.GetPath() == seg {
				next = e
			}
		}
		if next == nil {
			return nil, ErrNotFound
		}
		if next.GetType() != "tree" {
			return nil, ErrNotRegular
		}
		cur = path.Join(cur, seg)
		if es, err = g.tree(ctx, cur, next.GetSHA()); err != nil {
			return nil, err
		}
	}
	return es, nil
}

// List implements Source.
func (g *GitHub) List(ctx context.Context, dir string) ([]Entry, error) {
	es, err := g.dirEntries(ctx, dir)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(es))
	for _, e := range es {
		out = append(out, Entry{Name: e.GetPath(), Dir: e.GetType() == "tree"})
	}
	return out, nil
}

// Read implements Source: only a regular blob (mode 100644 or 100755) of
// at most MaxFileBytes, whose content hashes to its id.
func (g *GitHub) Read(ctx context.Context, p string) ([]byte, error) {
	dir, name := path.Split(p)
	es, err := g.dirEntries(ctx, strings.TrimSuffix(dir, "/"))
	if err != nil {
		return nil, err
	}
	var e *github.TreeEntry
	for _, x := range es {
		if x.GetPath() == name {
			e = x
		}
	}
	switch {
	case e == nil:
		return nil, ErrNotFound
	case e.GetType() != "blob" || (e.GetMode() != "100644" && e.GetMode() != "100755"):
		return nil, ErrNotRegular
	case e.GetSize() > MaxFileBytes:
		return nil, ErrTooLarge
	}
	b, err := g.blob(ctx, e.GetSHA())
	if err != nil {
		return nil, err
	}
	return b, nil
}

// blob fetches a blob raw, bounded, and verifies it against its id.
func (g *GitHub) blob(ctx context.Context, sha string) ([]byte, error) {
	u := fmt.Sprintf("repos/%s/%s/git/blobs/%s", url.PathEscape(g.owner), url.PathEscape(g.repo), sha)
	b, err := GetRaw(ctx, g.client, "GET blob "+sha+" of "+g.owner+"/"+g.repo, u, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	if BlobID(b) != sha {
		return nil, ErrIntegrity
	}
	return b, nil
}

// GetRaw GETs an API path (relative to the client's base URL) with
// Accept: application/vnd.github.raw under ghclient's retry contract and
// returns at most limit bytes: a longer body is ErrTooLarge, a 404
// ErrNotFound.
func GetRaw(ctx context.Context, client *ghclient.Client, opName, apiPath string, limit int) ([]byte, error) {
	b, err := client.GetRaw(ctx, opName, apiPath, limit, DefaultRequestTimeout)
	switch {
	case errors.Is(err, ghclient.ErrRawTooLarge):
		return nil, ErrTooLarge
	case err != nil:
		return nil, notFoundAs(err)
	}
	return b, nil
}

// BlobID is the git blob id of content: SHA-1 of "blob <len>\x00" and the
// bytes (https://git-scm.com/book/en/v2/Git-Internals-Git-Objects).
func BlobID(content []byte) string {
	h := sha1.New() //nolint:gosec // git object ids are SHA-1 by definition
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}
