package historycli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/githubissue"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/render"
)

// Alert issue identity.
const (
	// IssueMarker identifies the verification alert (with its author).
	IssueMarker = "<!-- build-lock-history-verify -->"
	// IssueTitle is the alert's title on creation.
	IssueTitle = "ops: build lock history verification found a violation"
	// maxVersionInIssue bounds each version shown in the issue body.
	maxVersionInIssue = 12000
)

func verify(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps Deps) error {
	s, err := loadVerify(args, getenv, stderr)
	if err != nil {
		return err
	}
	return runVerify(ctx, s, stdout, stderr, deps)
}

// runVerify is verify over settled settings.
func runVerify(ctx context.Context, s verifySettings, stdout, stderr io.Writer, deps Deps) error {
	c := s.common
	acks := s.acks
	srv := c.serverURL
	gh, err := c.client(ctx, stderr, deps)
	if err != nil {
		return err
	}
	clk := clockOf(deps)
	rep := &render.Report{Repository: c.repo, Branch: c.branch, GeneratedAt: clk.Now().UTC()}
	var loadErrs []error
	for _, lock := range c.locks {
		var cp *history.Checkpoint
		cpPath := ""
		if s.cpDir != "" {
			cpPath = filepath.Join(s.cpDir, lock+".json")
			if cp, err = readCheckpoint(cpPath, c.repo, c.branch, lock); err != nil {
				return err
			}
		}
		l, res, err := c.load(ctx, gh, lock, cp, timeZero, acks, srv)
		if err != nil {
			// An unreadable lock is reported (never a pass) and the others
			// are still verified.
			loadErrs = append(loadErrs, fmt.Errorf("lock %s: %w", lock, err))
			rep.Locks = append(rep.Locks, render.LockReport{Lock: lock, Verify: &history.Result{Lock: lock, Status: history.StatusIncomplete, Incomplete: err.Error(),
				Transitions: map[string]int{}, Results: map[string]int{}}})
			continue
		}
		rep.Locks = append(rep.Locks, render.LockReport{Lock: lock, Verify: res, Requests: l.Counts.Total(), Remaining: l.Remaining})
		if cpPath != "" {
			if next := history.NextCheckpoint(cp, res, c.repo, c.branch, clk.Now()); next != nil && next != cp {
				data, err := next.Encode()
				if err == nil {
					err = writeFileAtomic(cpPath, data)
				}
				if err != nil {
					return fmt.Errorf("write checkpoint %s: %w", cpPath, err)
				}
			}
		}
	}
	switch s.format {
	case "json":
		err = render.JSON(stdout, rep)
	default:
		err = render.Text(stdout, rep)
	}
	if err != nil {
		return err
	}
	if err := writeSummary(s.summary, rep); err != nil {
		return err
	}
	violated := false
	for _, l := range rep.Locks {
		violated = violated || l.Verify.Violations() > 0
	}
	if s.issue && violated {
		if err := syncIssue(ctx, rep, c, s.issueToken, s.issueTokenEnv, s.issueAuthor, stderr, deps); err != nil {
			return fmt.Errorf("sync the alert issue: %w", err)
		}
	}
	for _, e := range loadErrs {
		fmt.Fprintln(stderr, "error:", e)
	}
	pass := true
	for _, l := range rep.Locks {
		if l.Verify.Status != history.StatusClean || (l.Remaining > 0 && !s.allowPartial) {
			pass = false
		}
		if l.Remaining > 0 {
			fmt.Fprintf(stderr, "lock %s: %d commit(s) were left for the next run by --max-commits\n", l.Lock, l.Remaining)
		}
	}
	if !pass {
		return ErrFailed
	}
	return nil
}

// readCheckpoint reads path; a missing file is no checkpoint. A file for
// another repository, branch or lock is refused.
func readCheckpoint(path, repo, branch, lock string) (*history.Checkpoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	cp, err := history.DecodeCheckpoint(data)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w (delete it to verify the whole history again)", path, err)
	}
	if cp.Repository != repo || cp.Branch != branch || cp.Lock != lock {
		return nil, fmt.Errorf("checkpoint %s is for %s@%s lock %s, not %s@%s lock %s", path, cp.Repository, cp.Branch, cp.Lock, repo, branch, lock)
	}
	return cp, nil
}

// issueBody is the deterministic alert body: the same violations give the
// same body, so a daily re-run makes no write.
func issueBody(rep *render.Report) string {
	var b strings.Builder
	b.WriteString(IssueMarker + "\n")
	fmt.Fprintf(&b, "`buildlock history verify` found a violation in the lock state history of `%s` (branch `%s`).\n\n", rep.Repository, rep.Branch)
	for _, l := range rep.Locks {
		v := l.Verify
		if v.Violations() == 0 {
			continue
		}
		fmt.Fprintf(&b, "### Lock `%s`: %d violation(s)\n\n", l.Lock, v.Violations())
		if f := v.FirstViolation; f != nil {
			fmt.Fprintf(&b, "First: **%s** at commit `%s` (%s UTC, by %s)\n\n> %s\n\n", f.Rule, f.Commit, f.Time.UTC().Format("2006-01-02 15:04:05"),
				strings.ReplaceAll(f.Author, "`", "'"), strings.ReplaceAll(f.Detail, "\n", " "))
			fmt.Fprintf(&b, "<details><summary>Before and after</summary>\n\n```json\n%s\n```\n\n```json\n%s\n```\n\n</details>\n\n",
				clip(f.Before), clip(f.After))
		}
		n := 0
		for _, f := range v.Findings {
			if f.Acknowledged {
				continue
			}
			if n == 20 {
				b.WriteString("- …\n")
				break
			}
			fmt.Fprintf(&b, "- `%s` %s: %s\n", f.Commit, f.Rule, strings.ReplaceAll(f.Detail, "\n", " "))
			n++
		}
		b.WriteString("\n")
	}
	b.WriteString("A violation in the history cannot be undone. Investigate it (docs/history.md, \"Reading a finding\"), then accept it so the daily run passes again:\n\n")
	b.WriteString("```sh\ngh workflow run history-verify.yml -f acknowledge=<commit SHA>\n```\n\nand close this issue. Until then every daily run reports it again.\n")
	return b.String()
}

func clip(s string) string {
	s = strings.ReplaceAll(s, "```", "'''")
	if len(s) > maxVersionInIssue {
		return s[:maxVersionInIssue] + "\n… (cut)"
	}
	return s
}

func syncIssue(ctx context.Context, rep *render.Report, c common, token, tokenEnv, author string, stderr io.Writer, deps Deps) error {
	if token == "" {
		return fmt.Errorf("%w: --issue needs a token with issues: write in %s", ErrUsage, tokenEnv)
	}
	gh, err := ghclient.New(ctx, ghclient.Config{APIURL: c.apiURL, Token: token, Transport: deps.Transport, Clock: deps.Clock,
		Warn: func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }})
	if err != nil {
		return err
	}
	ic, err := githubissue.New(githubissue.Options{Client: gh, Owner: c.owner, Repo: c.name, Author: author, Clock: deps.Clock})
	if err != nil {
		return err
	}
	res, err := ic.Sync(ctx, githubissue.Spec{Marker: IssueMarker, Title: IssueTitle, Body: issueBody(rep), State: githubissue.Open})
	if err != nil {
		return err
	}
	if res.Issue != nil {
		fmt.Fprintf(stderr, "alert issue #%d: %s\n", res.Issue.Number, res.Action)
	}
	return nil
}
