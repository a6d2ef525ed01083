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

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/clock"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/doctor"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// doctorDeps are the injectable edges of `buildlock doctor` (tests use the
// emulator's in-memory transport).
type doctorDeps struct {
	getenv    func(string) string
	transport http.RoundTripper
	clock     clock.Clock
}

// errChecksFailed makes the exit code 1 after the report is printed.
var errChecksFailed = errors.New("one or more checks failed (see the fix lines above)")

// runDoctor implements `buildlock doctor --lock-repository OWNER/NAME`: it
// checks a real installation with the credentials in the environment
// (BUILD_LOCK_APP_ID / BUILD_LOCK_APP_PRIVATE_KEY for the writer App,
// BUILD_LOCK_READER_APP_ID / BUILD_LOCK_READER_APP_PRIVATE_KEY for the
// reader App, GITHUB_API_URL for GitHub Enterprise) and prints every check
// as PASS, FAIL or SKIP with the fix (docs/adopting.md). It only reads.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return doctorCommand(ctx, args, stdout, stderr, doctorDeps{getenv: os.Getenv})
}

func doctorCommand(ctx context.Context, args []string, stdout, stderr io.Writer, deps doctorDeps) error {
	fs := flag.NewFlagSet("buildlock doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("lock-repository", "", "lock repository OWNER/NAME (required)")
	branch := fs.String("state-branch", store.DefaultBranch, "branch that carries lock state")
	lock := fs.String("lock", "", "check only locks/<lock>.config.json (default: every lock config)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: buildlock doctor --lock-repository OWNER/NAME [--state-branch lock-state] [--lock NAME] [--json]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 || *repo == "" {
		fs.Usage()
		return fmt.Errorf("%w: --lock-repository OWNER/NAME is required", errUsage)
	}
	results, err := doctor.Run(ctx, doctor.Options{Repository: *repo, StateBranch: *branch, Lock: *lock,
		Getenv: deps.getenv, Transport: deps.transport, Clock: deps.clock})
	if err != nil {
		if errors.Is(err, doctor.ErrUsage) {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(results); err != nil {
			return err
		}
	} else if err := doctor.Render(stdout, results); err != nil {
		return err
	}
	if doctor.Failed(results) {
		return errChecksFailed
	}
	return nil
}
