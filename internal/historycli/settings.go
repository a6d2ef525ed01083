package historycli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/edgesettings"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Environment variables a history command reads when the matching flag is
// not given (the workflow passes repository variables through them).
const (
	EnvRepository  = "GITHUB_REPOSITORY"
	EnvLockName    = "BUILD_LOCK_NAME"
	EnvWriterLogin = "BUILD_LOCK_WRITER_LOGIN"
	EnvOperators   = "BUILD_LOCK_OPERATORS"
	EnvAPIURL      = "GITHUB_API_URL"
	EnvServerURL   = "GITHUB_SERVER_URL"
)

// settle fills c's defaults from the environment, validates every shared
// flag and reads the server URL, the API URL and the reader's credentials
// (the variables --app-id-env, --app-key-env and --token-env name), adding
// every problem to p, each an ErrUsage. It is the only reader of the
// environment below Main, with verifySettings and reportSettings.
func (c *common) settle(getenv func(string) string, p *edgesettings.Problems) {
	if c.repo == "" {
		c.repo = strings.TrimSpace(getenv(EnvRepository))
	}
	if len(c.locks) == 0 {
		_ = c.locks.Set(getenv(EnvLockName))
	}
	if len(c.writers) == 0 {
		_ = c.writers.Set(getenv(EnvWriterLogin))
	}
	if len(c.operators) == 0 {
		_ = c.operators.Set(getenv(EnvOperators))
	}
	if !repoRE.MatchString(c.repo) {
		p.Add(fmt.Errorf("%w: --repo must be OWNER/REPO, got %q", ErrUsage, c.repo))
	}
	if len(c.locks) == 0 {
		p.Add(fmt.Errorf("%w: --lock is required (or set BUILD_LOCK_NAME)", ErrUsage))
	}
	if len(c.writers) == 0 {
		p.Add(fmt.Errorf("%w: --writer is required: the writer App's bot login, e.g. my-build-lock[bot] (or set BUILD_LOCK_WRITER_LOGIN)", ErrUsage))
	}
	if !refRE.MatchString(c.branch) || strings.Contains(c.branch, "..") {
		p.Add(fmt.Errorf("%w: --branch %q is not a branch name", ErrUsage, c.branch))
	}
	if c.defaultBranch != "" && (!refRE.MatchString(c.defaultBranch) || strings.Contains(c.defaultBranch, "..")) {
		p.Add(fmt.Errorf("%w: --default-branch %q is not a branch name", ErrUsage, c.defaultBranch))
	}
	envNames := envRE.MatchString(c.tokenEnv) && envRE.MatchString(c.appIDEnv) && envRE.MatchString(c.keyEnv)
	if !envNames {
		p.Add(fmt.Errorf("%w: --token-env, --app-id-env and --app-key-env must name environment variables", ErrUsage))
	}
	if c.maxCommits < 1 || c.maxPages < 1 {
		p.Add(fmt.Errorf("%w: --max-commits and --max-pages must be at least 1", ErrUsage))
	}
	if c.staleness < 0 || c.leaseGrace <= 0 {
		p.Add(fmt.Errorf("%w: --config-staleness must not be negative and --lease-grace must be positive", ErrUsage))
	}
	for _, l := range c.locks {
		if !lockRE.MatchString(l) || l == "." || l == ".." {
			p.Add(fmt.Errorf("%w: --lock %q must be 1-80 of A-Z a-z 0-9 . _ -", ErrUsage, l))
		}
	}
	for _, l := range append(append([]string{}, c.writers...), c.operators...) {
		if !loginRE.MatchString(l) {
			p.Add(fmt.Errorf("%w: %q is not a GitHub login", ErrUsage, l))
		}
	}
	c.owner, c.name, _ = strings.Cut(c.repo, "/")

	c.serverURL = strings.TrimSpace(getenv(EnvServerURL))
	if _, err := lockstate.ServerOrigin(c.serverURL); err != nil {
		p.Add(fmt.Errorf("%w: GITHUB_SERVER_URL: %v", ErrUsage, err))
	}
	c.apiURL = getenv(EnvAPIURL)
	if !envNames {
		return
	}
	id, key := strings.TrimSpace(getenv(c.appIDEnv)), getenv(c.keyEnv)
	switch {
	case id != "" && key != "":
		var n int64
		if _, err := fmt.Sscan(id, &n); err != nil || n <= 0 {
			p.Add(fmt.Errorf("%w: %s must be a positive App id", ErrUsage, c.appIDEnv))
		}
		c.appID, c.appKey = n, []byte(key)
	default:
		c.token = strings.TrimSpace(getenv(c.tokenEnv))
		if c.token == "" {
			p.Add(fmt.Errorf("%w: no credentials: set %s and %s (the reader App) or %s (a token with contents: read on %s)",
				ErrUsage, c.appIDEnv, c.keyEnv, c.tokenEnv, c.repo))
		}
	}
}

// verifySettings is everything one `buildlock history verify` reads from
// its arguments and environment.
type verifySettings struct {
	common
	acks          listFlag
	cpDir, format string
	allowPartial  bool
	issue         bool
	// issueToken is the value of --issue-token-env, read once; judged only
	// when an alert must be written (a clean run needs no token).
	issueToken, issueTokenEnv, issueAuthor string
	summary                                string
}

// loadVerify parses verify's flags (a malformed flag stops the parse;
// flag.ErrHelp for -h) and reads the environment, listing every other
// problem in one *edgesettings.Error.
func loadVerify(args []string, getenv func(string) string, stderr io.Writer) (verifySettings, error) {
	var s verifySettings
	fs := flag.NewFlagSet("buildlock history verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	s.register(fs)
	fs.Var(&s.acks, "acknowledge", "accept the findings at this commit (a 40-hex SHA; repeatable): they are still reported, but pass and the checkpoint moves past them")
	fs.StringVar(&s.cpDir, "checkpoint-dir", "", "directory of checkpoint files (<lock>.json): read before, written after; a missing file means the whole history")
	fs.StringVar(&s.format, "format", "text", "output format: text or json")
	fs.BoolVar(&s.allowPartial, "allow-partial", false, "pass when --max-commits left commits for the next run (what was read verified clean)")
	fs.BoolVar(&s.issue, "issue", false, "on a violation, open or update one alert issue in --repo (needs --issue-token-env with issues: write)")
	fs.StringVar(&s.issueTokenEnv, "issue-token-env", "GITHUB_TOKEN", "environment variable holding the token that writes the alert issue")
	fs.StringVar(&s.issueAuthor, "issue-author", "", "login that authors the alert issue (default github-actions[bot], the workflow token's account)")
	fs.StringVar(&s.summary, "summary", "", "append the Markdown report to this file (e.g. \"$GITHUB_STEP_SUMMARY\")")
	if err := s.parse(fs, args,
		"usage: buildlock history verify --repo OWNER/REPO --lock NAME --writer LOGIN [--operator LOGIN] [--checkpoint-dir DIR] [--acknowledge SHA] [--format text|json] [--issue]",
		"Verifies every commit of locks/<lock>.json on the state branch (docs/history.md). Exit 0: clean; 1: a violation, an incomplete or unreadable history; 2: usage."); err != nil {
		return s, err
	}
	var p edgesettings.Problems
	s.settle(getenv, &p)
	if s.format != "text" && s.format != "json" {
		p.Add(fmt.Errorf("%w: --format must be text or json", ErrUsage))
	}
	for _, a := range s.acks {
		if !shaRE.MatchString(a) {
			p.Add(fmt.Errorf("%w: --acknowledge %q is not a 40-hex commit SHA", ErrUsage, a))
		}
	}
	if s.issue {
		if !envRE.MatchString(s.issueTokenEnv) {
			p.Add(fmt.Errorf("%w: --issue-token-env must name an environment variable", ErrUsage))
		} else {
			s.issueToken = strings.TrimSpace(getenv(s.issueTokenEnv))
		}
	}
	return s, p.Err()
}

// reportSettings is everything one `buildlock history report` reads from
// its arguments and environment.
type reportSettings struct {
	common
	window                  history.Window
	format, output, summary string
	whatIf                  bool
}

// loadReport parses report's flags (a malformed flag stops the parse;
// flag.ErrHelp for -h) and reads the environment, listing every other
// problem in one *edgesettings.Error. now anchors relative --since and
// --until values.
func loadReport(args []string, getenv func(string) string, stderr io.Writer, now time.Time) (reportSettings, error) {
	var s reportSettings
	fs := flag.NewFlagSet("buildlock history report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	s.register(fs)
	since := fs.String("since", "7d", "start of the window: a duration before now (7d, 36h) or an RFC 3339 time; \"all\" for the whole history")
	until := fs.String("until", "", "end of the window: a duration before now or an RFC 3339 time (default now)")
	fs.StringVar(&s.format, "format", FormatMarkdown, "output format: html, markdown, json or openmetrics")
	fs.StringVar(&s.output, "output", "", "write the report to this file instead of standard output")
	fs.StringVar(&s.summary, "summary", "", "also append the Markdown report to this file (e.g. \"$GITHUB_STEP_SUMMARY\")")
	fs.BoolVar(&s.whatIf, "what-if", true, "replay the window's demand with N-1, N, N+1 and N+2 seats")
	if err := s.parse(fs, args,
		"usage: buildlock history report --repo OWNER/REPO --lock NAME --writer LOGIN [--since 7d] [--until TIME] [--format html|markdown|json|openmetrics] [--output FILE]",
		"Seat-demand telemetry from the state history (docs/history.md): waits, holds, utilization, queue depth, admissions per hour, reaper and recovery events, and the what-if replay. The window's commits are verified too. Exit 0: report written; 1: a history could not be read completely; 2: usage."); err != nil {
		return s, err
	}
	var p edgesettings.Problems
	s.settle(getenv, &p)
	switch s.format {
	case FormatHTML, FormatMarkdown, FormatJSON, FormatOpenMetrics:
	default:
		p.Add(fmt.Errorf("%w: --format must be html, markdown, json or openmetrics, got %q", ErrUsage, s.format))
	}
	var err error
	if *since != "all" {
		if s.window.Since, err = parseWhen(*since, now); err != nil {
			p.Add(fmt.Errorf("%w: --since: %v", ErrUsage, err))
		}
	}
	if *until != "" {
		if s.window.Until, err = parseWhen(*until, now); err != nil {
			p.Add(fmt.Errorf("%w: --until: %v", ErrUsage, err))
		}
	}
	if !s.window.Until.IsZero() && !s.window.Since.IsZero() && !s.window.Since.Before(s.window.Until) {
		p.Add(fmt.Errorf("%w: --since must be before --until", ErrUsage))
	}
	return s, p.Err()
}
