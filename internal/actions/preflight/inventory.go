package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/unity/runners"
)

// The preflight's retry budget (unity-lifecycle-facts.md §6; the reference's
// runner preflight row of spec §3.6).
const (
	// Deadline is shared by the installation lookup, the token mint and
	// every page: it leaves diagnostic and teardown headroom inside a
	// three-minute preflight job.
	Deadline = 150 * time.Second
	// MaxAttempts bounds each call (within the deadline).
	MaxAttempts = 13
	// RetryBase and RetryMax shape the full-jitter exponential backoff.
	RetryBase = 5 * time.Second
	RetryMax  = 60 * time.Second
)

// Permission is the one permission the reader token is minted with.
const (
	Permission      = "organization_self_hosted_runners"
	PermissionLevel = "read"
)

// Knobs are the ghclient knobs of this action. The BUILD_LOCK_API_*
// environment knobs do not apply: the preflight's budget is part of its
// contract with the consumer's three-minute job.
func Knobs() ghclient.Knobs {
	return ghclient.Knobs{MaxAttempts: MaxAttempts, Base: RetryBase, Max: RetryMax}
}

// inventory reads the runner groups visible to one repository and their
// runners through one client, under one budget.
type inventory struct {
	c          *ghclient.Client
	owner      string
	repository string
	budget     ghclient.Budget
	appID      int64
}

// MaxResponseBytes bounds one response body of the inventory: a page of
// 100 runners with their labels is tens of kilobytes, so a body beyond it
// is not an inventory page, and is not read further.
const MaxResponseBytes = 4 << 20

// errResponseTooLarge stops the copy of a body past MaxResponseBytes.
var errResponseTooLarge = errors.New("preflight: response body over the size bound")

// capWriter keeps at most limit bytes; one byte more fails the copy, so
// the rest of the body is never read.
type capWriter struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if w.buf.Len()+len(p) > w.limit {
		w.over = true
		return 0, errResponseTooLarge
	}
	return w.buf.Write(p)
}

// page is one raw inventory page as GitHub answered it.
type page struct {
	body        []byte
	contentType string
}

// get reads one page of path (relative to the API URL) as raw bytes, at
// most MaxResponseBytes, under the shared budget. The body is decoded by
// the caller, outside the retry loop: a 2xx answer that is not the JSON it
// should be is GitHub's (or a proxy's) answer, not a transport failure, so
// it is reported as what it is and never retried.
func (v *inventory) get(ctx context.Context, opName, path string) (page, error) {
	var w capWriter
	var ctype string
	gh := v.c.GitHub()
	err := v.c.Do(ctx, ghclient.Op{Name: opName, Budget: v.budget}, func(ctx context.Context) (*github.Response, error) {
		req, err := gh.NewRequest(http.MethodGet, path, nil)
		if err != nil {
			return nil, err
		}
		w = capWriter{limit: MaxResponseBytes}
		resp, err := gh.Do(ctx, req, &w)
		if resp != nil {
			ctype = resp.Header.Get("Content-Type")
		}
		return resp, err
	})
	if w.over {
		return page{}, &Error{Reason: ReasonInventoryUnreadable, Message: fmt.Sprintf(
			"%s: GitHub's answer is larger than %d MiB, which no inventory page is; it was not read further (a proxy or a misconfigured GITHUB_API_URL?)", opName, MaxResponseBytes>>20)}
	}
	if err != nil {
		return page{}, err
	}
	return page{body: w.buf.Bytes(), contentType: ctype}, nil
}

// notInventory reports a 2xx answer that did not decode as an inventory
// page, saying what the body was instead.
func notInventory(opName string, p page, err error) error {
	mt, _, _ := mime.ParseMediaType(p.contentType)
	var what string
	switch {
	case errors.Is(err, runners.ErrNotJSON) && mt != "" && mt != "application/json" && !strings.HasSuffix(mt, "+json"):
		what = fmt.Sprintf("a %s body, not JSON", mt)
	case errors.Is(err, runners.ErrNotJSON) && len(p.body) == 0:
		what = "an empty body"
	case errors.Is(err, runners.ErrNotJSON):
		what = "a body that is " + err.Error()
	default:
		what = "JSON that is not a runner listing (" + err.Error() + ")"
	}
	return &Error{Reason: ReasonInventoryUnreadable, Err: err, Message: fmt.Sprintf(
		"%s: GitHub answered HTTP 200 with %s (%d bytes), not a runner inventory; a proxy, a captive portal or a GITHUB_API_URL that is not GitHub's API may have answered. Not retried: fix what answered, then re-run the job", opName, what, len(p.body))}
}

// groups lists the runner groups the repository may use. A listing whose
// pages did not add up is returned with its inconsistency.
func (v *inventory) groups(ctx context.Context) ([]runners.Group, *runners.PageError, error) {
	p := runners.NewPager("runner groups visible to " + v.repository)
	var out []runners.Group
	seen := map[int64]bool{}
	for more := true; more; {
		n := p.Page()
		op := fmt.Sprintf("GET /orgs/%s/actions/runner-groups (page %d)", v.owner, n)
		q := url.Values{"visible_to_repository": {v.repository}, "per_page": {strconv.Itoa(runners.PerPage)}, "page": {strconv.Itoa(n)}}
		pg, err := v.get(ctx, op, fmt.Sprintf("orgs/%s/actions/runner-groups?%s", url.PathEscape(v.owner), q.Encode()))
		if err != nil {
			return nil, nil, v.apiError(ctx, "list the runner groups", fmt.Sprintf("%s is not an organization whose runner groups the reader App can read (GitHub answered 404)", v.owner), err)
		}
		gs, total, err := runners.DecodeGroupsPage(pg.body)
		if err != nil {
			return nil, nil, notInventory(op, pg, err)
		}
		for _, g := range gs {
			if !seen[g.ID] {
				seen[g.ID] = true
				out = append(out, g)
			}
		}
		if more, err = p.Add(len(gs), total); err != nil {
			return nil, nil, inconsistent(err)
		}
	}
	return out, p.Inconsistency(), nil
}

// runners lists the runners of one group. A label whose name is not a JSON
// string cannot match a required label (they are strings) and is dropped,
// with a count in ignoredLabels. A listing whose pages did not add up is
// returned with its inconsistency.
func (v *inventory) runners(ctx context.Context, g runners.Group) (rs []runners.Runner, ignoredLabels int, _ *runners.PageError, _ error) {
	p := runners.NewPager(fmt.Sprintf("runners of group %d (%s)", g.ID, runners.DisplayName(g.Name)))
	for more := true; more; {
		n := p.Page()
		op := fmt.Sprintf("GET /orgs/%s/actions/runner-groups/%d/runners (page %d)", v.owner, g.ID, n)
		q := url.Values{"per_page": {strconv.Itoa(runners.PerPage)}, "page": {strconv.Itoa(n)}}
		pg, err := v.get(ctx, op, fmt.Sprintf("orgs/%s/actions/runner-groups/%d/runners?%s", url.PathEscape(v.owner), g.ID, q.Encode()))
		if err != nil {
			return nil, 0, nil, v.apiError(ctx, fmt.Sprintf("list the runners of group %d", g.ID),
				fmt.Sprintf("runner group %d disappeared while the inventory was read (GitHub answered 404); re-run the job", g.ID), err)
		}
		listed, total, ignored, err := runners.DecodeRunnersPage(pg.body, g.ID)
		if err != nil {
			return nil, 0, nil, notInventory(op, pg, err)
		}
		ignoredLabels += ignored
		rs = append(rs, listed...)
		if more, err = p.Add(len(listed), total); err != nil {
			return nil, 0, nil, inconsistent(err)
		}
	}
	return rs, ignoredLabels, p.Inconsistency(), nil
}

func inconsistent(err error) error {
	return &Error{Reason: ReasonInventoryInconsistent, Err: err,
		Message: err.Error() + "; the inventory cannot be trusted, re-run the job"}
}

// apiError classifies a failed call; notFound explains a 404 of the call
// itself. A cancelled run returns the error unchanged (the runner's signal
// decides the exit code).
func (v *inventory) apiError(ctx context.Context, what, notFound string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var se *ghclient.Error
	if errors.As(err, &se) && se.SecondaryLimit && !se.SecondaryUntil.IsZero() && !se.SecondaryUntil.Before(v.budget.Deadline) {
		return &Error{Reason: ReasonAPIUnavailable, Err: err, Message: fmt.Sprintf(
			"could not %s: GitHub rate-limited the reader App's token and asked it to wait until %s (Retry-After), after the preflight's %s deadline, so the call was not retried; re-run the job after %s. This is a GitHub API availability failure, not evidence that a required runner is missing",
			what, se.SecondaryUntil.UTC().Format(time.RFC3339), Deadline, se.SecondaryUntil.UTC().Format(time.RFC3339))}
	}
	if ghclient.IsExhausted(err) {
		return &Error{Reason: ReasonAPIUnavailable, Err: err, Message: fmt.Sprintf(
			"could not %s within the preflight's retry budget (%d attempts per call, one %s deadline): this is a GitHub API or authentication availability failure, not evidence that a required runner is missing; re-run the job: %v",
			what, MaxAttempts, Deadline, err)}
	}
	var ge *ghclient.Error
	status, op := 0, ""
	credential := false
	if errors.As(err, &ge) {
		status, op, credential = ge.Status, ge.Op, ge.CredentialFailure
		var inner *ghclient.Error
		if credential && errors.As(ge.Err, &inner) {
			status, op = inner.Status, inner.Op
		}
	}
	var fix string
	switch {
	case credential && status == http.StatusNotFound:
		fix = fmt.Sprintf("the reader GitHub App (id %d) is not installed on %s; install it on the organization with the organization permission %s: %s", v.appID, v.owner, Permission, PermissionLevel)
	case credential && status == http.StatusUnprocessableEntity:
		fix = fmt.Sprintf("the reader GitHub App's installation on %s does not grant the organization permission %s: %s (\"Self-hosted runners: Read\"); grant it in the App's settings and accept the new permission on the organization", v.owner, Permission, PermissionLevel)
	case credential && status == http.StatusUnauthorized:
		fix = fmt.Sprintf("GitHub rejected the reader App's credentials: check reader-app-id (%d) and reader-app-private-key", v.appID)
	case credential:
		fix = "the reader App installation token could not be minted"
	case status == http.StatusForbidden:
		fix = fmt.Sprintf("the reader App installation token lacks the organization permission %s: %s (\"Self-hosted runners: Read\") on %s, or the organization refuses the App", Permission, PermissionLevel, v.owner)
	case status == http.StatusNotFound:
		fix = notFound
	default:
		fix = "GitHub refused the request"
	}
	if op == "" {
		op = what
	}
	return &Error{Reason: ReasonInventoryUnreadable, Err: err, Message: fmt.Sprintf("could not %s: %s (%s: %v)", what, fix, op, err)}
}

// capTransport bounds every response body the preflight's client reads
// (the installation lookup and the token mint too): past limit bytes a
// read fails, so a runaway answer never fills memory.
type capTransport struct {
	base  http.RoundTripper
	limit int64
}

func (t capTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if resp != nil && resp.Body != nil {
		resp.Body = &cappedBody{ReadCloser: resp.Body, left: t.limit}
	}
	return resp, err
}

// cappedBody fails a read past its bound.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errResponseTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
