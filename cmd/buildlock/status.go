package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// statusDeps are the injectable edges of `buildlock status` (tests use the
// emulator's in-memory transport and a fake clock).
type statusDeps struct {
	getenv    func(string) string
	transport http.RoundTripper
	clock     clock.Clock
}

var (
	statusRepoRE   = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9_.-]{1,100}$`)
	statusEnvNames = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
)

// runStatus implements `buildlock status`: it reads one lock's committed
// state (and its config, for the seat count) and prints holders with run
// links, runners, ages, lease left and fencing tokens; the queue with
// positions and waits; reservations with time left; and the active incident
// with the exact command that recovers it. --format markdown adds a Mermaid
// timeline of seat occupancy for a job summary or an issue.
//
// The token comes from the environment variable named by --token-env
// (default GITHUB_TOKEN) and needs contents: read on the lock repository; it
// is never printed. GITHUB_API_URL selects the API (default
// https://api.github.com) and GITHUB_SERVER_URL the web origin incidents
// are validated against. Status only reads: it never writes lock state.
func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return statusCommand(ctx, args, stdout, stderr, statusDeps{getenv: os.Getenv})
}

func statusCommand(ctx context.Context, args []string, stdout, stderr io.Writer, deps statusDeps) error {
	fs := flag.NewFlagSet("buildlock status", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "lock repository OWNER/REPO (required)")
	lock := fs.String("lock", "", "lock name (required)")
	branch := fs.String("branch", store.DefaultBranch, "branch that carries lock state")
	format := fs.String("format", lockview.FormatTable, "output format: table, json or markdown")
	tokenEnv := fs.String("token-env", "GITHUB_TOKEN", "environment variable holding a token with contents: read")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: buildlock status --repo OWNER/REPO --lock NAME [--branch lock-state] [--format table|json|markdown] [--token-env GITHUB_TOKEN]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	usage := func(format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintln(stderr, "buildlock status:", msg)
		return fmt.Errorf("%w: %s", errUsage, msg)
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected arguments %q", fs.Args())
	case !statusRepoRE.MatchString(*repo):
		return usage("--repo must be OWNER/REPO, got %q", *repo)
	case *lock == "":
		return usage("--lock is required")
	case *format != lockview.FormatTable && *format != lockview.FormatJSON && *format != lockview.FormatMarkdown:
		return usage("--format must be table, json or markdown, got %q", *format)
	case !statusEnvNames.MatchString(*tokenEnv):
		return usage("--token-env must name an environment variable")
	}
	getenv := deps.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	token := strings.TrimSpace(getenv(*tokenEnv))
	if token == "" {
		return fmt.Errorf("no token: set %s (contents: read on %s) or choose another variable with --token-env", *tokenEnv, *repo)
	}
	clk := deps.clock
	if clk == nil {
		clk = clock.Real{}
	}
	gh, err := ghclient.New(ctx, ghclient.Config{APIURL: getenv("GITHUB_API_URL"), Token: token, Transport: deps.transport, Clock: clk,
		Warn: func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }})
	if err != nil {
		return err
	}
	owner, name, _ := strings.Cut(*repo, "/")
	st, err := store.New(store.Options{Client: gh, Owner: owner, Repo: name, Branch: *branch, Lock: *lock,
		ServerURL: getenv("GITHUB_SERVER_URL"), Clock: clk})
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	snap, err := st.Load(ctx)
	if err != nil {
		return fmt.Errorf("read %s of %s on %s: %w", st.StatePath(), *repo, *branch, err)
	}
	cfg, warnings, err := st.LoadConfig(ctx)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	view := lockview.Build(snap.State, lockview.Options{Repository: *repo, Branch: *branch, Config: cfg, Now: clk.Now()})
	return lockview.Render(stdout, view, *format)
}
