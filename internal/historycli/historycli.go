package historycli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/ghsource"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/history/render"
)

// ErrUsage marks a flag or environment error (exit code 2).
var ErrUsage = errors.New("usage error")

// ErrFailed marks a run whose report is not a pass (violations, an
// incomplete history, a bound reached without --allow-partial): exit 1,
// after the report was written.
var ErrFailed = errors.New("history verification did not pass")

// Deps are the injectable edges (tests pass the emulator's transport and a
// fake clock).
type Deps struct {
	Transport http.RoundTripper
	Clock     clock.Clock
}

const usage = `usage: buildlock history <verify|report> [flags]

  verify   check every commit of the lock's state file: valid documents, no
           over-admission, every transition one the pure core produces, strictly
           increasing fencing tokens, the writer App as author, an unbroken chain
           that still contains the last checkpoint (docs/history.md)
  report   seat-demand telemetry over a window: waits, holds, utilization, queue
           depth, admissions per hour, reaper and recovery events, and the what-if
           replay with N-1, N+1 and N+2 seats; HTML, Markdown, JSON or OpenMetrics

Run "buildlock history verify -h" or "buildlock history report -h" for flags.
`

// Main runs `buildlock history` with args (after "history"). The command's
// settings (flags and environment) are read once, through getenv, before
// any request; every problem is listed in one refusal (ErrUsage).
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, deps Deps) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ErrUsage
	}
	switch args[0] {
	case "verify":
		return verify(ctx, args[1:], getenv, stdout, stderr, deps)
	case "report":
		return report(ctx, args[1:], getenv, stdout, stderr, deps)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return flag.ErrHelp
	default:
		fmt.Fprintf(stderr, "buildlock history: unknown command %q\n\n%s", args[0], usage)
		return ErrUsage
	}
}

// common are the flags both commands share.
type common struct {
	repo, branch, defaultBranch string
	locks, writers, operators   listFlag
	allowUnsigned               bool
	tokenEnv, appIDEnv, keyEnv  string
	maxCommits, maxPages        int
	staleness, leaseGrace       time.Duration
	owner, name                 string
	// Settled by settle from the environment.
	apiURL, serverURL string
	appID             int64
	appKey            []byte
	token             string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.repo, "repo", "", "lock repository OWNER/REPO (required; default $GITHUB_REPOSITORY)")
	fs.Var(&c.locks, "lock", "lock name (repeatable or comma-separated; default $BUILD_LOCK_NAME)")
	fs.StringVar(&c.branch, "branch", "lock-state", "branch that carries lock state")
	fs.StringVar(&c.defaultBranch, "default-branch", "", "branch that carries locks/<lock>.config.json (default: the repository's default branch)")
	fs.Var(&c.writers, "writer", "login allowed to write lock state, the writer App's bot \"<slug>[bot]\" (repeatable; default $BUILD_LOCK_WRITER_LOGIN)")
	fs.BoolVar(&c.allowUnsigned, "allow-unsigned-writer", false, "accept writer commits without GitHub's verified signature (only for GitHub Enterprise Server instances that do not sign web commits)")
	fs.Var(&c.operators, "operator", "login also allowed to write recoveries and the lock's first version (repeatable; default $BUILD_LOCK_OPERATORS)")
	fs.StringVar(&c.tokenEnv, "token-env", "GITHUB_TOKEN", "environment variable holding a token with contents: read (used when no reader App is configured)")
	fs.StringVar(&c.appIDEnv, "app-id-env", "BUILD_LOCK_READER_APP_ID", "environment variable holding the reader App's id (App auth when it and the key are set)")
	fs.StringVar(&c.keyEnv, "app-key-env", "BUILD_LOCK_READER_APP_PRIVATE_KEY", "environment variable holding the reader App's private key (PEM)")
	fs.IntVar(&c.maxCommits, "max-commits", ghsource.DefaultMaxCommits, "read at most this many versions per lock in one run (the rest wait for the next run)")
	fs.IntVar(&c.maxPages, "max-pages", ghsource.DefaultMaxPages, "refuse a history of more than this many pages of 100 commits")
	fs.DurationVar(&c.staleness, "config-staleness", history.DefaultConfigStaleness, "how long before a write a config version may still have been read by its writer")
	fs.DurationVar(&c.leaseGrace, "lease-grace", history.DefaultLeaseGrace, "the reaper's quarantine auto-recovery grace (its lease-minutes)")
}

var (
	repoRE  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9_.-]{1,100}$`)
	lockRE  = regexp.MustCompile(`^[A-Za-z0-9._-]{1,80}$`)
	envRE   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$`)
	shaRE   = regexp.MustCompile(`^[0-9a-f]{40}$`)
	refRE   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)
)

// client builds the reader's GitHub client: the reader App (installation
// on the lock repository, a token scoped to contents: read on it) when its
// id and key are set, else the token in --token-env (settled by settle).
func (c *common) client(ctx context.Context, stderr io.Writer, deps Deps) (*ghclient.Client, error) {
	cfg := ghclient.Config{APIURL: c.apiURL, Transport: deps.Transport, Clock: deps.Clock,
		Warn: func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }}
	if c.appID != 0 {
		cfg.AppID, cfg.PrivateKey, cfg.InstallationRepository = c.appID, c.appKey, c.repo
		cfg.TokenRepositories = []string{c.name}
		cfg.Permissions = &github.InstallationPermissions{Contents: github.String("read")}
	} else {
		cfg.Token = c.token
	}
	return ghclient.New(ctx, cfg)
}

// load reads and verifies one lock.
func (c *common) load(ctx context.Context, gh *ghclient.Client, lock string, cp *history.Checkpoint, from time.Time, ack []string, serverURL string) (*ghsource.Loaded, *history.Result, error) {
	l, err := ghsource.Load(ctx, ghsource.Options{Client: gh, Owner: c.owner, Repo: c.name, Branch: c.branch, DefaultBranch: c.defaultBranch,
		Lock: lock, MaxPages: c.maxPages, MaxCommits: c.maxCommits, From: from}, cp)
	if err != nil {
		return nil, nil, err
	}
	c.defaultBranch = l.DefaultBranch
	in := l.Input
	in.ServerURL, in.Writers, in.Operators, in.Acknowledged = serverURL, c.writers, c.operators, ack
	in.AllowUnsignedWriters = c.allowUnsigned
	in.ConfigStaleness, in.LeaseGrace = c.staleness, c.leaseGrace
	return l, history.Verify(in), nil
}

func clockOf(d Deps) clock.Clock {
	if d.Clock == nil {
		return clock.Real{}
	}
	return d.Clock
}

// parse sets fs's usage text and parses args (settle validates them).
func (c *common) parse(fs *flag.FlagSet, args []string, usage, about string) error {
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fmt.Fprintln(fs.Output(), "\n"+about)
		fs.PrintDefaults()
	}
	return parse(fs, args)
}

// writeSummary appends rep as Markdown to path ("" = no summary).
func writeSummary(path string, rep *render.Report) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := render.Markdown(&b, rep); err != nil {
		return err
	}
	if err := appendFile(path, b.String()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// parse parses fs, mapping -h to flag.ErrHelp and anything else to ErrUsage.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", ErrUsage, fs.Args())
	}
	return nil
}

// listFlag is a repeatable, comma-separated string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

// Set adds the comma-separated values of v.
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so a crash never leaves half a checkpoint.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".checkpoint-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		_ = os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(f.Name())
		return err
	}
	return os.Rename(f.Name(), path)
}

// appendFile appends text to path (a step summary).
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, text); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
