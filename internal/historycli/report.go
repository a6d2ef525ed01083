package historycli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/render"
)

var timeZero time.Time

// Report formats.
const (
	FormatHTML        = "html"
	FormatMarkdown    = "markdown"
	FormatJSON        = "json"
	FormatOpenMetrics = "openmetrics"
)

func report(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps Deps) error {
	fs := flag.NewFlagSet("buildlock history report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	since := fs.String("since", "7d", "start of the window: a duration before now (7d, 36h) or an RFC 3339 time; \"all\" for the whole history")
	until := fs.String("until", "", "end of the window: a duration before now or an RFC 3339 time (default now)")
	format := fs.String("format", FormatMarkdown, "output format: html, markdown, json or openmetrics")
	output := fs.String("output", "", "write the report to this file instead of standard output")
	summary := fs.String("summary", "", "also append the Markdown report to this file (e.g. \"$GITHUB_STEP_SUMMARY\")")
	whatIf := fs.Bool("what-if", true, "replay the window's demand with N-1, N, N+1 and N+2 seats")
	if err := c.parse(fs, args, getenv,
		"usage: buildlock history report --repo OWNER/REPO --lock NAME --writer LOGIN [--since 7d] [--until TIME] [--format html|markdown|json|openmetrics] [--output FILE]",
		"Seat-demand telemetry from the state history (docs/history.md): waits, holds, utilization, queue depth, admissions per hour, reaper and recovery events, and the what-if replay. The window's commits are verified too. Exit 0: report written; 1: a history could not be read completely; 2: usage."); err != nil {
		return err
	}
	switch *format {
	case FormatHTML, FormatMarkdown, FormatJSON, FormatOpenMetrics:
	default:
		return fmt.Errorf("%w: --format must be html, markdown, json or openmetrics, got %q", ErrUsage, *format)
	}
	clk := clockOf(deps)
	now := clk.Now().UTC()
	var w history.Window
	var err error
	if *since != "all" {
		if w.Since, err = parseWhen(*since, now); err != nil {
			return fmt.Errorf("%w: --since: %v", ErrUsage, err)
		}
	}
	if *until != "" {
		if w.Until, err = parseWhen(*until, now); err != nil {
			return fmt.Errorf("%w: --until: %v", ErrUsage, err)
		}
	}
	if !w.Until.IsZero() && !w.Since.IsZero() && !w.Since.Before(w.Until) {
		return fmt.Errorf("%w: --since must be before --until", ErrUsage)
	}
	srv, err := serverURL(getenv)
	if err != nil {
		return err
	}
	gh, err := c.client(ctx, getenv, stderr, deps)
	if err != nil {
		return err
	}
	rep := &render.Report{Repository: c.repo, Branch: c.branch, GeneratedAt: now}
	failed := false
	for _, lock := range c.locks {
		l, res, err := c.load(ctx, gh, lock, nil, w.Since, nil, srv)
		if err != nil {
			fmt.Fprintf(stderr, "error: lock %s: %v\n", lock, err)
			failed = true
			rep.Locks = append(rep.Locks, render.LockReport{Lock: lock, Verify: &history.Result{Lock: lock, Status: history.StatusIncomplete, Incomplete: err.Error(),
				Transitions: map[string]int{}, Results: map[string]int{}}})
			continue
		}
		lr := render.LockReport{Lock: lock, Verify: res, Requests: l.Counts.Total(), Remaining: l.Remaining}
		if res.Status == history.StatusIncomplete || l.Remaining > 0 {
			failed = true
		}
		win := w
		if win.Until.IsZero() {
			win.Until = now.Add(time.Nanosecond)
		}
		lr.Stats = history.Compute(lock, res.Base, res.Steps, win)
		if w.Until.IsZero() {
			lr.Stats.To = now
		}
		if *whatIf {
			lr.WhatIf = history.RunWhatIf(lr.Stats)
		}
		rep.Locks = append(rep.Locks, lr)
	}
	out := stdout
	var f *os.File
	if *output != "" {
		if f, err = os.Create(*output); err != nil {
			return err
		}
		out = f
	}
	switch *format {
	case FormatHTML:
		err = render.HTML(out, rep)
	case FormatJSON:
		err = render.JSON(out, rep)
	case FormatOpenMetrics:
		err = render.OpenMetrics(out, rep)
	default:
		err = render.Markdown(out, rep)
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if err := writeSummary(*summary, rep); err != nil {
		return err
	}
	for _, l := range rep.Locks {
		fmt.Fprintf(stderr, "lock %s: %s\n", l.Lock, l.Headline())
	}
	if failed {
		return ErrFailed
	}
	return nil
}

// parseWhen reads an RFC 3339 time, or a duration before now: Go's
// (36h, 90m) or whole days (7d).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 3660 {
			return time.Time{}, fmt.Errorf("%q is not a number of days", s)
		}
		return now.Add(-time.Duration(n) * 24 * time.Hour), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration like 7d or 36h", s)
	}
	return now.Add(-d), nil
}
