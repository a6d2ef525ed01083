package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/ghclient"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
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
	r, err := parseLockRead("status", args, stderr, []string{lockview.FormatTable, lockview.FormatJSON, lockview.FormatMarkdown}, deps.getenv)
	if err != nil {
		return err
	}
	snap, cfg, clk, err := r.read(ctx, stderr, deps)
	if err != nil {
		return err
	}
	view := lockview.Build(snap.State, lockview.Options{Repository: r.repo, Branch: r.branch, Config: cfg, Now: clk.Now()})
	return lockview.Render(stdout, view, r.format)
}

// read loads the lock's committed state and its config.
func (r lockRead) read(ctx context.Context, stderr io.Writer, deps statusDeps) (store.Snapshot, lockstate.Config, clock.Clock, error) {
	token := r.token
	if token == "" {
		return store.Snapshot{}, lockstate.Config{}, nil, fmt.Errorf("no token: set %s (contents: read on %s) or choose another variable with --token-env", r.tokenEnv, r.repo)
	}
	clk := deps.clock
	if clk == nil {
		clk = clock.Real{}
	}
	gh, err := ghclient.New(ctx, ghclient.Config{APIURL: r.apiURL, Token: token, Transport: deps.transport, Clock: clk,
		Warn: func(msg string) { fmt.Fprintln(stderr, "warning:", msg) }})
	if err != nil {
		return store.Snapshot{}, lockstate.Config{}, nil, err
	}
	owner, name, _ := strings.Cut(r.repo, "/")
	st, err := store.New(store.Options{Client: gh, Owner: owner, Repo: name, Branch: r.branch, Lock: r.lock,
		ServerURL: r.serverURL, Clock: clk})
	if err != nil {
		return store.Snapshot{}, lockstate.Config{}, nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	snap, err := st.Load(ctx)
	if err != nil {
		return store.Snapshot{}, lockstate.Config{}, nil, fmt.Errorf("read %s of %s on %s: %w", st.StatePath(), r.repo, r.branch, err)
	}
	cfg, warnings, err := st.LoadConfig(ctx)
	if err != nil {
		return store.Snapshot{}, lockstate.Config{}, nil, err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	return snap, cfg, clk, nil
}

// runUpgrade implements `buildlock upgrade --repo OWNER/REPO --lock NAME`:
// the lock's pending schema upgrade (the schema its config asks for above
// the state's), what the drain still waits for (holders, cooldowns,
// quarantines with their recover command, the incident, queued jobs without
// a runner id), who holds and waits and from which client as far as their
// fields tell, and what to do about clients that do not pause
// (docs/upgrading.md). It only reads.
func runUpgrade(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return upgradeCommand(ctx, args, stdout, stderr, statusDeps{getenv: os.Getenv})
}

func upgradeCommand(ctx context.Context, args []string, stdout, stderr io.Writer, deps statusDeps) error {
	r, err := parseLockRead("upgrade", args, stderr, []string{lockview.FormatTable, lockview.FormatJSON}, deps.getenv)
	if err != nil {
		return err
	}
	snap, cfg, clk, err := r.read(ctx, stderr, deps)
	if err != nil {
		return err
	}
	return lockview.RenderUpgrade(stdout, lockview.BuildUpgrade(snap.State, cfg, r.repo, clk.Now()), r.format)
}
