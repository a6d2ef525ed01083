package historycli

import (
	"context"
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
	now := clockOf(deps).Now().UTC()
	s, err := loadReport(args, getenv, stderr, now)
	if err != nil {
		return err
	}
	return runReport(ctx, s, now, stdout, stderr, deps)
}

// runReport is report over settled settings; now is the clock reading the
// window was anchored to.
func runReport(ctx context.Context, s reportSettings, now time.Time, stdout, stderr io.Writer, deps Deps) error {
	c, w := s.common, s.window
	srv := c.serverURL
	gh, err := c.client(ctx, stderr, deps)
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
		if s.whatIf {
			lr.WhatIf = history.RunWhatIf(lr.Stats)
		}
		rep.Locks = append(rep.Locks, lr)
	}
	out := stdout
	var f *os.File
	if s.output != "" {
		if f, err = os.Create(s.output); err != nil {
			return err
		}
		out = f
	}
	switch s.format {
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
	if err := writeSummary(s.summary, rep); err != nil {
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
