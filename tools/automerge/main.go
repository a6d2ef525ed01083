// Command automerge decides whether a Dependabot pull request may be merged
// automatically (docs/packaging.md "Dependency updates"). The auto-merge
// workflow runs it, with a read-only token and a checkout of the default
// branch only, when the CI workflow completes; a second job without any
// checkout merges only on its "merge=true", with --match-head-commit so
// exactly the commit CI passed for is merged.
//
// Usage:
//
//	go run ./tools/automerge -event "$GITHUB_EVENT_PATH" >> "$GITHUB_OUTPUT"
//
// It reads the workflow_run event, fetches the pull request through the
// GitHub API (GITHUB_API_URL, token in GH_TOKEN or GITHUB_TOKEN, pull
// requests: read) and prints merge=true|false, reason=<code>,
// pull-request=<n> and head-sha=<sha>, plus one explanation line on stderr.
// A refusal is not an error (exit 0); a failure to read the facts is (exit 1).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, nil, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "automerge:", err)
		os.Exit(1)
	}
}

// workflowRunEvent is the part of the workflow_run event payload read here
// (https://docs.github.com/en/webhooks/webhook-events-and-payloads#workflow_run).
type workflowRunEvent struct {
	WorkflowRun struct {
		Path           string `json:"path"`
		Event          string `json:"event"`
		Conclusion     string `json:"conclusion"`
		HeadSHA        string `json:"head_sha"`
		HeadRepository struct {
			FullName string `json:"full_name"`
		} `json:"head_repository"`
		HeadCommit struct {
			Message string `json:"message"`
			Author  struct {
				Email string `json:"email"`
			} `json:"author"`
		} `json:"head_commit"`
		// PullRequests lists the same-repository pull requests whose head
		// is the run's commit; GitHub leaves it empty for forks.
		PullRequests []struct {
			Number int `json:"number"`
		} `json:"pull_requests"`
	} `json:"workflow_run"`
	Repository struct {
		FullName string `json:"full_name"`
	} `json:"repository"`
}

func run(ctx context.Context, args []string, getenv func(string) string, transport http.RoundTripper, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("automerge", flag.ContinueOnError)
	eventPath := fs.String("event", "", "the workflow_run event payload (GITHUB_EVENT_PATH)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	raw, err := os.ReadFile(*eventPath)
	if err != nil {
		return fmt.Errorf("read the event: %w", err)
	}
	var ev workflowRunEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return fmt.Errorf("decode the event: %w", err)
	}
	wr := ev.WorkflowRun
	f := Facts{Repository: ev.Repository.FullName, Run: Run{
		Path: wr.Path, Event: wr.Event, Conclusion: wr.Conclusion, HeadSHA: wr.HeadSHA,
		HeadRepository: wr.HeadRepository.FullName,
		HeadCommit:     Commit{Message: wr.HeadCommit.Message, AuthorEmail: wr.HeadCommit.Author.Email},
	}}
	if len(wr.PullRequests) > 1 {
		return emit(stdout, stderr, refuse("ambiguous", "the run's commit heads %d pull requests", len(wr.PullRequests)), 0, wr.HeadSHA)
	}
	if len(wr.PullRequests) == 1 {
		if f.PR, err = fetchPR(ctx, getenv, transport, f.Repository, wr.PullRequests[0].Number); err != nil {
			return err
		}
	}
	n := 0
	if f.PR != nil {
		n = f.PR.Number
	}
	return emit(stdout, stderr, Decide(f), n, wr.HeadSHA)
}

func emit(stdout, stderr io.Writer, d Decision, pr int, sha string) error {
	fmt.Fprintf(stderr, "automerge: %s: %s\n", d.Reason, d.Message)
	_, err := fmt.Fprintf(stdout, "merge=%t\nreason=%s\npull-request=%d\nhead-sha=%s\n", d.Merge, d.Reason, pr, sha)
	return err
}

// fetchPR reads the pull request's current state through the shared
// retry contract (internal/ghclient).
func fetchPR(ctx context.Context, getenv func(string) string, transport http.RoundTripper, repository string, number int) (*PullRequest, error) {
	token := strings.TrimSpace(getenv("GH_TOKEN"))
	if token == "" {
		token = strings.TrimSpace(getenv("GITHUB_TOKEN"))
	}
	if token == "" {
		return nil, errors.New("no token: set GH_TOKEN (pull-requests: read)")
	}
	owner, name, ok := strings.Cut(repository, "/")
	if !ok {
		return nil, fmt.Errorf("repository %q is not owner/name", repository)
	}
	c, err := ghclient.New(ctx, ghclient.Config{APIURL: getenv("GITHUB_API_URL"), Token: token, Transport: transport, ETagCacheEntries: -1})
	if err != nil {
		return nil, err
	}
	var pr *github.PullRequest
	err = c.Do(ctx, ghclient.Op{Name: "GET pull request"},
		func(ctx context.Context) (*github.Response, error) {
			var resp *github.Response
			var err error
			pr, resp, err = c.GitHub().PullRequests.Get(ctx, owner, name, number)
			return resp, err
		})
	if err != nil {
		return nil, fmt.Errorf("read pull request #%d: %w", number, err)
	}
	return &PullRequest{
		Number: pr.GetNumber(), Author: pr.GetUser().GetLogin(), State: pr.GetState(), Draft: pr.GetDraft(),
		HeadSHA: pr.GetHead().GetSHA(), HeadRepository: pr.GetHead().GetRepo().GetFullName(),
		BaseRepository: pr.GetBase().GetRepo().GetFullName(),
	}, nil
}
