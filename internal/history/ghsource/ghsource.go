package ghsource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Defaults for Options.
const (
	// PerPage is the commits list page size: GitHub's maximum, so a history
	// of n commits costs ceil(n/100) list requests.
	PerPage = 100
	// DefaultMaxPages bounds one listing (100,000 commits).
	DefaultMaxPages = 1000
	// DefaultMaxCommits bounds the versions read in one run; the rest wait
	// for the next run (the checkpoint advances over what was verified).
	DefaultMaxCommits = 20000
	// DefaultConcurrency is how many version reads run at once (GitHub
	// asks integrations not to exceed 100 concurrent requests).
	DefaultConcurrency = 4
	// MaxVersionBytes bounds one version (a state file is far smaller).
	MaxVersionBytes = 8 << 20
)

// Error codes of a failed load.
const (
	// CodeUnreadable: a listing page or a version could not be read, or a
	// version's bytes do not hash to the blob id GitHub reported.
	CodeUnreadable = "HISTORY_UNREADABLE"
	// CodeBoundExceeded: the listing has more pages than MaxPages.
	CodeBoundExceeded = "HISTORY_BOUND_EXCEEDED"
	// CodeNoHistory: no commit on the branch touched the state file.
	CodeNoHistory = "HISTORY_NO_STATE"
)

// Error is a failed load; Code is stable.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Error implements error.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Options configure a load.
type Options struct {
	Client *ghclient.Client
	Owner  string
	Repo   string
	// Branch is the state branch (default lock-state).
	Branch string
	// DefaultBranch holds the config history; "" looks it up (one request).
	DefaultBranch string
	Lock          string
	// MaxPages bounds each listing; MaxCommits the versions read.
	MaxPages, MaxCommits int
	// Concurrency bounds parallel version reads.
	Concurrency int
	// From, when set (reports), skips reading versions older than the last
	// one before From: that one becomes the Base.
	From time.Time
	// Budget is the retry budget of every call.
	Budget ghclient.Budget
}

// Counts are the requests a load made, by purpose.
type Counts struct {
	ListPages       int `json:"list_pages"`
	VersionReads    int `json:"version_reads"`
	ConfigPages     int `json:"config_pages"`
	ConfigReads     int `json:"config_reads"`
	StartProofReads int `json:"start_proof_reads"`
	RepositoryReads int `json:"repository_reads"`
}

// Total is the sum of the counts.
func (c Counts) Total() int {
	return c.ListPages + c.VersionReads + c.ConfigPages + c.ConfigReads + c.StartProofReads + c.RepositoryReads
}

// Loaded is the material for history.Verify (the caller adds writers,
// operators and acknowledgements) and what reading it cost.
type Loaded struct {
	Input history.Input
	// Listed is the number of commits listed after the checkpoint (or in
	// total); Remaining of them were left for the next run by MaxCommits.
	Listed, Remaining int
	Counts            Counts
	// DefaultBranch is the branch the config history was read from.
	DefaultBranch string
}

func (o *Options) defaults() error {
	if o.Client == nil || o.Owner == "" || o.Repo == "" || o.Lock == "" {
		return errors.New("ghsource: client, owner, repo and lock are required")
	}
	if o.Branch == "" {
		o.Branch = "lock-state"
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxCommits <= 0 {
		o.MaxCommits = DefaultMaxCommits
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	return nil
}

// StatePath is locks/<lock>.json.
func (o *Options) StatePath() string { return "locks/" + o.Lock + ".json" }

// ConfigPath is locks/<lock>.config.json.
func (o *Options) ConfigPath() string { return "locks/" + o.Lock + ".config.json" }

type reader struct {
	o  Options
	gh *github.Client
	mu sync.Mutex
	n  Counts
}

// Load reads the history after cp (nil: the whole history).
func Load(ctx context.Context, o Options, cp *history.Checkpoint) (*Loaded, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	r := &reader{o: o, gh: o.Client.GitHub()}
	out := &Loaded{Input: history.Input{Lock: o.Lock, Checkpoint: cp}, DefaultBranch: o.DefaultBranch}
	if out.DefaultBranch == "" {
		def, err := r.defaultBranch(ctx)
		if err != nil {
			return nil, err
		}
		out.DefaultBranch = def
	}
	stop := ""
	if cp != nil {
		stop = cp.Head.SHA
	}
	commits, found, err := r.list(ctx, o.Branch, o.StatePath(), stop, &r.n.ListPages)
	if err != nil {
		return nil, err
	}
	if len(commits) == 0 && !found {
		return nil, &Error{Code: CodeNoHistory, Message: fmt.Sprintf("no commit on %s of %s/%s touched %s", o.Branch, o.Owner, o.Repo, o.StatePath())}
	}
	if cp != nil && !found {
		// The checkpoint's head is gone: the whole history was listed.
		for _, c := range commits {
			out.Input.Listed = append(out.Input.Listed, c.SHA)
		}
	}
	reverse(commits)
	switch {
	case cp != nil && found:
		out.Input.Base = cp.BaseVersion()
	case !o.From.IsZero():
		idx := 0
		for idx < len(commits) && commits[idx].Time.Before(o.From) {
			idx++
		}
		if idx > 0 {
			base, err := r.version(ctx, commits[idx-1])
			if err != nil {
				return nil, err
			}
			out.Input.Base = &base
			commits = commits[idx:]
		}
	}
	if out.Input.Base == nil && len(commits) > 0 {
		proven, err := r.created(ctx, commits[0])
		if err != nil {
			return nil, err
		}
		out.Input.StartProven = proven
	}
	out.Listed = len(commits)
	if len(commits) > o.MaxCommits {
		out.Remaining = len(commits) - o.MaxCommits
		commits = commits[:o.MaxCommits]
	}
	if out.Input.Configs, err = r.configs(ctx, out.DefaultBranch); err != nil {
		return nil, err
	}
	versions, err := r.versions(ctx, commits)
	switch {
	case err != nil && len(versions) == 0:
		return nil, err
	case err != nil:
		// The versions before the first that could not be read are still
		// verified (so a checkpoint keeps that progress); the history is
		// incomplete, which is never a pass.
		out.Input.Incomplete = fmt.Sprintf("%d of %d commits read; then %v", len(versions), len(commits), err)
	}
	out.Input.Versions = versions
	out.Counts = r.n
	return out, nil
}

func (r *reader) op(name string) ghclient.Op { return ghclient.Op{Name: name, Budget: r.o.Budget} }

func (r *reader) count(f func(*Counts)) {
	r.mu.Lock()
	f(&r.n)
	r.mu.Unlock()
}

func (r *reader) defaultBranch(ctx context.Context) (string, error) {
	var repo *github.Repository
	r.count(func(c *Counts) { c.RepositoryReads++ })
	err := r.o.Client.Do(ctx, r.op("GET repository"), func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		repo, resp, err = r.gh.Repositories.Get(ctx, r.o.Owner, r.o.Repo)
		return resp, err
	})
	if err != nil {
		return "", &Error{Code: CodeUnreadable, Message: fmt.Sprintf("read repository %s/%s", r.o.Owner, r.o.Repo), Err: err}
	}
	if b := repo.GetDefaultBranch(); b != "" {
		return b, nil
	}
	return "main", nil
}

// list returns the commits of ref that touched path, newest first, up to
// (not including) stop; found reports whether stop was met.
func (r *reader) list(ctx context.Context, ref, path, stop string, pages *int) ([]history.Commit, bool, error) {
	var out []history.Commit
	page := 1
	want := "/repos/" + r.o.Owner + "/" + r.o.Repo + "/commits"
	for n := 1; ; n++ {
		if n > r.o.MaxPages {
			return nil, false, &Error{Code: CodeBoundExceeded, Message: fmt.Sprintf("the history of %s on %s has more than %d pages of %d commits; refusing a partial view (raise --max-pages)", path, ref, r.o.MaxPages, PerPage)}
		}
		var batch []*github.RepositoryCommit
		next := 0
		r.count(func(*Counts) { *pages++ })
		err := r.o.Client.Do(ctx, r.op("GET commits "+path), func(ctx context.Context) (*github.Response, error) {
			b, resp, err := r.gh.Repositories.ListCommits(ctx, r.o.Owner, r.o.Repo, &github.CommitsListOptions{
				SHA: ref, Path: path, ListOptions: github.ListOptions{Page: page, PerPage: PerPage}})
			batch = b
			if resp != nil {
				next = resp.NextPage
				if err == nil && !servedFrom(resp, want) {
					return resp, fmt.Errorf("the commits list was served from %s, not %s", resp.Request.URL.Path, want)
				}
			}
			return resp, err
		})
		if err != nil {
			if ghclient.IsNotFound(err) && page == 1 {
				return nil, false, &Error{Code: CodeNoHistory, Message: fmt.Sprintf("branch %s of %s/%s does not exist", ref, r.o.Owner, r.o.Repo), Err: err}
			}
			return nil, false, &Error{Code: CodeUnreadable, Message: fmt.Sprintf("list commits of %s on %s (page %d)", path, ref, page), Err: err}
		}
		for _, rc := range batch {
			c, err := convert(rc)
			if err != nil {
				return nil, false, &Error{Code: CodeUnreadable, Message: "list commits of " + path, Err: err}
			}
			if stop != "" && c.SHA == stop {
				return out, true, nil
			}
			out = append(out, c)
		}
		if next == 0 {
			return out, false, nil
		}
		if next <= page || len(batch) == 0 {
			return nil, false, &Error{Code: CodeUnreadable, Message: fmt.Sprintf("list commits of %s: page %d names next page %d", path, page, next)}
		}
		page = next
	}
}

func servedFrom(resp *github.Response, want string) bool {
	if resp == nil || resp.Request == nil || resp.Request.URL == nil {
		return true
	}
	p := resp.Request.URL.Path
	return strings.EqualFold(p, want) || strings.HasSuffix(strings.ToLower(p), strings.ToLower(want))
}

func convert(rc *github.RepositoryCommit) (history.Commit, error) {
	if rc == nil || !hexSHA(rc.GetSHA()) {
		return history.Commit{}, fmt.Errorf("a listed commit has no valid sha")
	}
	c := history.Commit{SHA: rc.GetSHA(), Message: rc.GetCommit().GetMessage(), Verified: rc.GetCommit().GetVerification().GetVerified()}
	for _, p := range rc.Parents {
		c.Parents = append(c.Parents, p.GetSHA())
	}
	if d := rc.GetCommit().GetCommitter().GetDate(); !d.IsZero() {
		c.Time = d.UTC()
	} else if d := rc.GetCommit().GetAuthor().GetDate(); !d.IsZero() {
		c.Time = d.UTC()
	}
	c.AuthorLogin, c.AuthorType = rc.GetAuthor().GetLogin(), rc.GetAuthor().GetType()
	c.AuthorName, c.AuthorEmail = rc.GetCommit().GetAuthor().GetName(), rc.GetCommit().GetAuthor().GetEmail()
	return c, nil
}

func hexSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// versions reads every commit's version, Concurrency at a time, in order.
// After a failure no new read starts; the reads in flight finish (at most
// Concurrency − 1 wasted), and the versions before the first commit that
// could not be read are returned with its error.
func (r *reader) versions(ctx context.Context, commits []history.Commit) ([]history.Version, error) {
	out := make([]history.Version, len(commits))
	errs := make([]error, len(commits))
	var (
		wg     sync.WaitGroup
		failed atomic.Bool
	)
	sem := make(chan struct{}, r.o.Concurrency)
	started := 0
	for i := range commits {
		sem <- struct{}{}
		if failed.Load() || ctx.Err() != nil {
			<-sem
			break
		}
		started++
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if out[i], errs[i] = r.version(ctx, commits[i]); errs[i] != nil {
				failed.Store(true)
			}
		}()
	}
	wg.Wait()
	for i := range started {
		if errs[i] != nil {
			return out[:i], errs[i]
		}
	}
	if started < len(commits) {
		err := ctx.Err()
		if err == nil {
			err = errors.New("reads stopped")
		}
		return out[:started], err
	}
	return out, nil
}

// version reads the state file at c: GET contents/{path}?ref=<sha>. A 404
// is a commit that deleted the file. The bytes must hash to the blob id the
// response names (git hash-object), so a read can never pass off one
// version's bytes as another's.
func (r *reader) version(ctx context.Context, c history.Commit) (history.Version, error) {
	r.count(func(n *Counts) { n.VersionReads++ })
	data, sha, exists, err := r.readFile(ctx, r.o.StatePath(), c.SHA)
	if err != nil {
		return history.Version{}, &Error{Code: CodeUnreadable, Message: fmt.Sprintf("read %s at commit %s", r.o.StatePath(), c.SHA), Err: err}
	}
	v := history.Version{Commit: c}
	if exists {
		v.BlobSHA, v.Content = sha, data
	}
	return v, nil
}

// created reports whether c created the state file: it is a root commit,
// or the file is absent at its parent.
func (r *reader) created(ctx context.Context, c history.Commit) (bool, error) {
	if len(c.Parents) == 0 {
		return true, nil
	}
	r.count(func(n *Counts) { n.StartProofReads++ })
	_, _, exists, err := r.readFile(ctx, r.o.StatePath(), c.Parents[0])
	if err != nil {
		return false, &Error{Code: CodeUnreadable, Message: fmt.Sprintf("prove where %s was created (read it at %s)", r.o.StatePath(), c.Parents[0]), Err: err}
	}
	return !exists, nil
}

// readFile returns path at ref; exists is false on 404.
func (r *reader) readFile(ctx context.Context, path, ref string) ([]byte, string, bool, error) {
	var file *github.RepositoryContent
	err := r.o.Client.Do(ctx, r.op("GET contents "+path), func(ctx context.Context) (*github.Response, error) {
		f, _, resp, err := r.gh.Repositories.GetContents(ctx, r.o.Owner, r.o.Repo, path, &github.RepositoryContentGetOptions{Ref: ref})
		file = f
		return resp, err
	})
	if ghclient.IsNotFound(err) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	if file == nil {
		return nil, "", false, fmt.Errorf("%s at %s is a directory", path, ref)
	}
	sha := file.GetSHA()
	var data []byte
	if file.GetEncoding() == "none" {
		if data, err = r.readRaw(ctx, path, ref); err != nil {
			return nil, "", false, err
		}
	} else {
		s, err := file.GetContent()
		if err != nil {
			return nil, "", false, fmt.Errorf("decode %s at %s: %w", path, ref, err)
		}
		data = []byte(s)
	}
	if len(data) > MaxVersionBytes {
		return nil, "", false, fmt.Errorf("%s at %s is %d bytes, above %d", path, ref, len(data), MaxVersionBytes)
	}
	if got := history.BlobSHA(data); got != sha {
		return nil, "", false, fmt.Errorf("%s at %s: the bytes hash to blob %s, not the %s GitHub reported", path, ref, got, sha)
	}
	return data, sha, true, nil
}

func (r *reader) readRaw(ctx context.Context, path, ref string) ([]byte, error) {
	var buf bytes.Buffer
	u := fmt.Sprintf("repos/%s/%s/contents/%s?ref=%s", r.o.Owner, r.o.Repo, path, ref)
	err := r.o.Client.Do(ctx, r.op("GET raw contents "+path), func(ctx context.Context) (*github.Response, error) {
		req, err := r.gh.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/vnd.github.raw")
		buf.Reset()
		return r.gh.Do(ctx, req, &buf)
	})
	return buf.Bytes(), err
}

// configs reads the config file's history on the default branch, oldest
// first (a deleted file means the defaults).
func (r *reader) configs(ctx context.Context, branch string) ([]history.ConfigVersion, error) {
	commits, _, err := r.list(ctx, branch, r.o.ConfigPath(), "", &r.n.ConfigPages)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Code == CodeNoHistory {
			return nil, nil
		}
		return nil, err
	}
	reverse(commits)
	var out []history.ConfigVersion
	for _, c := range commits {
		r.count(func(n *Counts) { n.ConfigReads++ })
		data, _, exists, err := r.readFile(ctx, r.o.ConfigPath(), c.SHA)
		if err != nil {
			return nil, &Error{Code: CodeUnreadable, Message: fmt.Sprintf("read %s at %s", r.o.ConfigPath(), c.SHA), Err: err}
		}
		cv := history.ConfigVersion{SHA: c.SHA, Time: c.Time, Missing: !exists, Config: lockstate.DefaultConfig()}
		if exists {
			cv.Config, cv.Warnings = lockstate.DecodeConfig(data)
		}
		out = append(out, cv)
	}
	return out, nil
}
