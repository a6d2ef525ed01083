package githubissue

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

// Defaults for Options. Each names why it has its value.
const (
	// DefaultAuthor is the login GitHub records as the author of issues
	// created with a workflow's GITHUB_TOKEN; the monitors run with that
	// token only.
	DefaultAuthor = "github-actions[bot]"
	// DefaultPerPage is GitHub's maximum page size, so discovery costs one
	// request for any realistic number of automation issues.
	DefaultPerPage = 100
	// DefaultMaxPages bounds discovery (the reference's 240-page ceiling): a
	// listing that does not end within it is an error, never a partial view
	// that could hide a duplicate.
	DefaultMaxPages = 240
	// DefaultRequestTimeout bounds each HTTP attempt (the reference's 20 s).
	DefaultRequestTimeout = 20 * time.Second
	// DefaultVerifyAttempts bounds the re-discovery after a write; listing
	// replicas can lag a write by a moment.
	DefaultVerifyAttempts = 3
	// DefaultVerifyDelay separates verification attempts.
	DefaultVerifyDelay = time.Second
	// MaxBodyChars is GitHub's issue body limit (characters); a longer body
	// is refused before any request.
	MaxBodyChars = 65536
	// MaxTitleChars is GitHub's issue title limit.
	MaxTitleChars = 256
)

// ErrDuplicate means more than one issue matches a Spec. The synchronizer
// writes nothing then: an operator closes or edits the extra issue.
var ErrDuplicate = errors.New("githubissue: more than one issue matches the marker and author")

// ErrInvalidSpec means a Spec or Options that can never be synchronized
// safely (no marker, an oversized body, ...).
var ErrInvalidSpec = errors.New("githubissue: invalid issue spec")

// ErrFence means a response came from outside the configured repository.
var ErrFence = errors.New("githubissue: response is outside the configured repository")

// ErrVerify means the issue did not read back in the wanted shape after a
// write.
var ErrVerify = errors.New("githubissue: issue did not verify after the write")

// State is an issue state.
type State string

// Issue states.
const (
	// Open is an open issue.
	Open State = "open"
	// Closed is a closed issue.
	Closed State = "closed"
)

// Action is what Sync did.
type Action string

// Sync actions.
const (
	// ActionNone means the issue already had the wanted shape (or a closed
	// state was wanted and there was no issue): no write was made.
	ActionNone Action = "none"
	// ActionCreated means a new issue was opened.
	ActionCreated Action = "created"
	// ActionUpdated means an open issue's body or title was rewritten.
	ActionUpdated Action = "updated"
	// ActionReopened means a closed issue was opened again.
	ActionReopened Action = "reopened"
	// ActionClosed means an open issue was closed.
	ActionClosed Action = "closed"
)

// Options configures a Client.
type Options struct {
	// Client is the GitHub client (a token with issues: write on Owner/Repo).
	Client *ghclient.Client
	// Owner and Repo fence every request to one repository.
	Owner, Repo string
	// Author is the login whose issues are discovered and matched; default
	// DefaultAuthor.
	Author string
	// PerPage and MaxPages bound discovery; defaults DefaultPerPage and
	// DefaultMaxPages.
	PerPage, MaxPages int
	// RequestTimeout bounds each HTTP attempt; default DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Budget is the retry budget of every call.
	Budget ghclient.Budget
	// Clock paces verification retries; default clock.Real{}.
	Clock clock.Clock
	// VerifyAttempts and VerifyDelay bound re-discovery after a write;
	// defaults DefaultVerifyAttempts and DefaultVerifyDelay.
	VerifyAttempts int
	VerifyDelay    time.Duration
}

// Spec is the wanted shape of one automation issue.
type Spec struct {
	// Marker identifies the issue; it must be an HTML comment
	// ("<!-- name -->") and is placed in Body by the caller.
	Marker string
	// Title is used when creating, and for matching when MatchTitle is set.
	// Updates never rewrite a title: an operator's rename stands.
	Title string
	// MatchTitle requires an exact title match during discovery.
	MatchTitle bool
	// Body is the wanted body; it must contain Marker. It is ignored when
	// closing with PreserveBodyOnClose.
	Body string
	// State is the wanted state.
	State State
	// PreserveBodyOnClose closes an open issue without rewriting its body.
	PreserveBodyOnClose bool
	// ClosedIsTerminal leaves an already closed issue untouched while State
	// is Closed (no body refresh); State Open still re-opens it.
	ClosedIsTerminal bool
	// Labels are applied on creation only (optional).
	Labels []string
}

// Issue is the part of a GitHub issue the synchronizer looks at.
type Issue struct {
	Number  int
	Title   string
	Body    string
	State   State
	Author  string
	HTMLURL string
}

// Result reports one Sync.
type Result struct {
	// Action is what was done.
	Action Action
	// Issue is the issue after the sync; nil when there is none.
	Issue *Issue
	// Writes counts write requests made (0 or 1).
	Writes int
}

// Client synchronizes automation issues in one repository.
type Client struct {
	opts Options

	mu sync.Mutex
	// renamed is the repository's current "owner/name" after a followed
	// redirect showed it was renamed (its id is the one ghclient pinned);
	// issues naming it pass the fence (redirect.go).
	renamed string
}

var (
	ownerPattern  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$`)
	repoPattern   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	markerPattern = regexp.MustCompile(`^<!-- [A-Za-z0-9][A-Za-z0-9:._/-]{0,120} -->$`)
)

// New validates opts and returns a Client. It makes no request.
func New(opts Options) (*Client, error) {
	if opts.Client == nil {
		return nil, fmt.Errorf("%w: a GitHub client is required", ErrInvalidSpec)
	}
	if !ownerPattern.MatchString(opts.Owner) || !repoPattern.MatchString(opts.Repo) || opts.Repo == "." || opts.Repo == ".." {
		return nil, fmt.Errorf("%w: repository %q/%q is not owner/name", ErrInvalidSpec, opts.Owner, opts.Repo)
	}
	if opts.Author == "" {
		opts.Author = DefaultAuthor
	}
	if opts.PerPage <= 0 {
		opts.PerPage = DefaultPerPage
	}
	opts.PerPage = min(opts.PerPage, 100)
	if opts.MaxPages <= 0 {
		opts.MaxPages = DefaultMaxPages
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.VerifyAttempts <= 0 {
		opts.VerifyAttempts = DefaultVerifyAttempts
	}
	if opts.VerifyDelay <= 0 {
		opts.VerifyDelay = DefaultVerifyDelay
	}
	return &Client{opts: opts}, nil
}

// Repository returns "owner/name".
func (c *Client) Repository() string { return c.opts.Owner + "/" + c.opts.Repo }

func (s Spec) validate() error {
	if !markerPattern.MatchString(s.Marker) {
		return fmt.Errorf("%w: marker %q must be an HTML comment like <!-- name -->", ErrInvalidSpec, s.Marker)
	}
	if s.State != Open && s.State != Closed {
		return fmt.Errorf("%w: state %q must be open or closed", ErrInvalidSpec, s.State)
	}
	if strings.TrimSpace(s.Title) == "" || utf8.RuneCountInString(s.Title) > MaxTitleChars || strings.ContainsAny(s.Title, "\r\n") {
		return fmt.Errorf("%w: title must be one non-empty line of at most %d characters", ErrInvalidSpec, MaxTitleChars)
	}
	if s.State == Open || !s.PreserveBodyOnClose {
		if !strings.Contains(s.Body, s.Marker) {
			return fmt.Errorf("%w: body must contain the marker %s", ErrInvalidSpec, s.Marker)
		}
		if !utf8.ValidString(s.Body) || utf8.RuneCountInString(s.Body) > MaxBodyChars {
			return fmt.Errorf("%w: body must be valid UTF-8 of at most %d characters", ErrInvalidSpec, MaxBodyChars)
		}
	}
	return nil
}

// Find returns the one issue matching spec's marker, author and (when
// MatchTitle) title, or nil when there is none. More than one is
// ErrDuplicate.
func (c *Client) Find(ctx context.Context, spec Spec) (*Issue, error) {
	if ctx == nil {
		return nil, errors.New("githubissue: nil context")
	}
	all, err := c.list(ctx)
	if err != nil {
		return nil, err
	}
	var found []*Issue
	for _, is := range all {
		if c.matches(is, spec) {
			found = append(found, is)
		}
	}
	switch len(found) {
	case 0:
		return nil, nil
	case 1:
		return found[0], nil
	default:
		nums := make([]string, len(found))
		for i, is := range found {
			nums[i] = fmt.Sprintf("#%d", is.Number)
		}
		return nil, fmt.Errorf("%w: %s in %s carry %s; close or edit all but one", ErrDuplicate, strings.Join(nums, ", "), c.Repository(), spec.Marker)
	}
}

func (c *Client) matches(is *Issue, spec Spec) bool {
	if !strings.EqualFold(is.Author, c.opts.Author) || !strings.Contains(is.Body, spec.Marker) {
		return false
	}
	return !spec.MatchTitle || is.Title == spec.Title
}

// Sync makes the issue identified by spec have spec's shape, writing only
// when something differs. See the package documentation for the rules.
func (c *Client) Sync(ctx context.Context, spec Spec) (Result, error) {
	if ctx == nil {
		return Result{}, errors.New("githubissue: nil context")
	}
	if err := spec.validate(); err != nil {
		return Result{}, err
	}
	cur, err := c.Find(ctx, spec)
	if err != nil {
		return Result{}, err
	}
	patch, action := plan(cur, spec)
	if action == ActionNone {
		return Result{Action: ActionNone, Issue: cur}, nil
	}
	var written *Issue
	if action == ActionCreated {
		written, err = c.create(ctx, spec)
	} else {
		written, err = c.patch(ctx, cur.Number, patch)
	}
	if err != nil {
		return Result{}, err
	}
	res := Result{Action: action, Issue: written, Writes: 1}
	verified, err := c.verify(ctx, spec, written.Number)
	if err != nil {
		return res, err
	}
	res.Issue = verified
	return res, nil
}

// plan decides the one write (if any) that brings cur to spec.
func plan(cur *Issue, spec Spec) (*github.IssueRequest, Action) {
	if cur == nil {
		if spec.State == Closed {
			return nil, ActionNone
		}
		return nil, ActionCreated
	}
	req := &github.IssueRequest{}
	changed := false
	switch spec.State {
	case Open:
		if cur.Body != spec.Body {
			req.Body, changed = github.String(spec.Body), true
		}
		if cur.State != Open {
			req.State = github.String(string(Open))
			return req, ActionReopened
		}
		if changed {
			return req, ActionUpdated
		}
		return nil, ActionNone
	default: // Closed
		if cur.State == Closed && (spec.ClosedIsTerminal || spec.PreserveBodyOnClose) {
			return nil, ActionNone
		}
		if !spec.PreserveBodyOnClose && cur.Body != spec.Body {
			req.Body, changed = github.String(spec.Body), true
		}
		if cur.State != Closed {
			req.State = github.String(string(Closed))
			return req, ActionClosed
		}
		if changed {
			return req, ActionUpdated
		}
		return nil, ActionNone
	}
}

// verify re-discovers the issue and checks it has the wanted shape.
func (c *Client) verify(ctx context.Context, spec Spec, number int) (*Issue, error) {
	var last error
	for attempt := 1; attempt <= c.opts.VerifyAttempts; attempt++ {
		if attempt > 1 {
			if err := c.opts.Clock.Sleep(ctx, c.opts.VerifyDelay); err != nil {
				return nil, err
			}
		}
		got, err := c.Find(ctx, spec)
		switch {
		case err != nil:
			if errors.Is(err, ErrDuplicate) || errors.Is(err, ErrFence) {
				return nil, err
			}
			last = err
		case got == nil:
			last = fmt.Errorf("%w: #%d is not listed with the marker", ErrVerify, number)
		case got.Number != number:
			return nil, fmt.Errorf("%w: wrote #%d but discovery returns #%d", ErrVerify, number, got.Number)
		case got.State != spec.State:
			last = fmt.Errorf("%w: #%d is %s, want %s", ErrVerify, number, got.State, spec.State)
		case (spec.State == Open || !spec.PreserveBodyOnClose) && got.Body != spec.Body:
			last = fmt.Errorf("%w: #%d body differs from the one written", ErrVerify, number)
		default:
			return got, nil
		}
	}
	return nil, last
}

func (c *Client) op(name string, mutation bool) ghclient.Op {
	return ghclient.Op{Name: name, Mutation: mutation, Budget: c.opts.Budget}
}

// do runs one request under the retry contract with a per-attempt timeout
// and the repository fence on the served path.
func (c *Client) do(ctx context.Context, name string, mutation bool, wantPath string, fn func(ctx context.Context) (*github.Response, error)) error {
	var fenceErr error
	var movedID int64
	err := c.opts.Client.Do(ctx, c.op(name, mutation), func(ctx context.Context) (*github.Response, error) {
		actx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
		defer cancel()
		resp, err := fn(actx)
		fenceErr = nil
		movedID = 0
		if resp != nil && resp.Response != nil && resp.Request != nil && resp.Request.URL != nil {
			served := resp.Request.URL.EscapedPath()
			if !pathIs(served, wantPath) {
				id, ok := c.sameRepository(served, wantPath)
				if ok {
					movedID = id
				} else {
					fenceErr = fmt.Errorf("%w: %s was served from %s", ErrFence, name, served)
				}
			}
		}
		return resp, err
	})
	if err != nil {
		return err
	}
	if fenceErr == nil && movedID != 0 {
		return c.learnRename(ctx, movedID)
	}
	return fenceErr
}

// pathIs reports whether the served path ends with want (GHES serves the
// API under a prefix such as /api/v3).
func pathIs(served, want string) bool {
	return strings.EqualFold(served, want) || strings.HasSuffix(strings.ToLower(served), strings.ToLower(want))
}

func (c *Client) issuesPath() string {
	return "/repos/" + c.opts.Owner + "/" + c.opts.Repo + "/issues"
}

// list returns every non-PR issue created by the author, oldest first.
func (c *Client) list(ctx context.Context) ([]*Issue, error) {
	gh := c.opts.Client.GitHub()
	var out []*Issue
	page := 1
	for pages := 1; ; pages++ {
		if pages > c.opts.MaxPages {
			return nil, fmt.Errorf("githubissue: list issues of %s by %s: more than %d pages; refusing a partial view", c.Repository(), c.opts.Author, c.opts.MaxPages)
		}
		opts := &github.IssueListByRepoOptions{State: "all", Creator: c.opts.Author, Sort: "created", Direction: "asc",
			ListOptions: github.ListOptions{Page: page, PerPage: c.opts.PerPage}}
		var batch []*github.Issue
		var next int
		err := c.do(ctx, "GET issues "+c.Repository(), false, c.issuesPath(), func(ctx context.Context) (*github.Response, error) {
			b, resp, err := gh.Issues.ListByRepo(ctx, c.opts.Owner, c.opts.Repo, opts)
			batch = b
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return nil, fmt.Errorf("githubissue: list issues of %s: %w", c.Repository(), err)
		}
		for _, gi := range batch {
			if gi == nil || gi.IsPullRequest() {
				continue
			}
			is, err := c.convert(gi)
			if err != nil {
				return nil, err
			}
			out = append(out, is)
		}
		if next == 0 {
			return out, nil
		}
		if next <= page {
			return nil, fmt.Errorf("githubissue: list issues of %s: next page %d does not advance past page %d", c.Repository(), next, page)
		}
		page = next
	}
}

// convert checks the fence on an issue and keeps the fields we use.
func (c *Client) convert(gi *github.Issue) (*Issue, error) {
	if u := gi.GetRepositoryURL(); u != "" && !pathIs(strings.TrimRight(u, "/"), "/repos/"+c.opts.Owner+"/"+c.opts.Repo) && !c.isRenamed(strings.TrimRight(u, "/")) {
		return nil, fmt.Errorf("%w: issue #%d belongs to %s", ErrFence, gi.GetNumber(), u)
	}
	st := State(gi.GetState())
	if st != Open && st != Closed {
		return nil, fmt.Errorf("githubissue: issue #%d of %s has unknown state %q", gi.GetNumber(), c.Repository(), gi.GetState())
	}
	return &Issue{
		Number:  gi.GetNumber(),
		Title:   gi.GetTitle(),
		Body:    gi.GetBody(),
		State:   st,
		Author:  gi.GetUser().GetLogin(),
		HTMLURL: gi.GetHTMLURL(),
	}, nil
}

func (c *Client) create(ctx context.Context, spec Spec) (*Issue, error) {
	gh := c.opts.Client.GitHub()
	req := &github.IssueRequest{Title: github.String(spec.Title), Body: github.String(spec.Body)}
	if len(spec.Labels) > 0 {
		labels := append([]string(nil), spec.Labels...)
		req.Labels = &labels
	}
	var created *github.Issue
	err := c.do(ctx, "POST issue "+c.Repository(), true, c.issuesPath(), func(ctx context.Context) (*github.Response, error) {
		is, resp, err := gh.Issues.Create(ctx, c.opts.Owner, c.opts.Repo, req)
		created = is
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("githubissue: create issue in %s: %w", c.Repository(), err)
	}
	return c.convert(created)
}

func (c *Client) patch(ctx context.Context, number int, req *github.IssueRequest) (*Issue, error) {
	gh := c.opts.Client.GitHub()
	var updated *github.Issue
	path := fmt.Sprintf("%s/%d", c.issuesPath(), number)
	err := c.do(ctx, fmt.Sprintf("PATCH issue %s#%d", c.Repository(), number), true, path, func(ctx context.Context) (*github.Response, error) {
		is, resp, err := gh.Issues.Edit(ctx, c.opts.Owner, c.opts.Repo, number, req)
		updated = is
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("githubissue: update issue %s#%d: %w", c.Repository(), number, err)
	}
	return c.convert(updated)
}
