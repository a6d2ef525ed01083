package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockview"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/store"
)

// This file is where the commands that read a lock with a token (status,
// upgrade) read their command line and environment, once.

// lockRead is the command line of a command that reads one lock's state and
// config with a token (status, upgrade), with the variables it reads: the
// token (never printed), GITHUB_API_URL and GITHUB_SERVER_URL.
type lockRead struct {
	repo, lock, branch, format, tokenEnv string
	token, apiURL, serverURL             string
}

// parseLockRead parses the flags `buildlock <name>` shares with status and
// reads the variables they name through getenv (nil reads nothing): the
// command's one read of its environment.
func parseLockRead(name string, args []string, stderr io.Writer, formats []string, getenv func(string) string) (lockRead, error) {
	var r lockRead
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	fs := flag.NewFlagSet("buildlock "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&r.repo, "repo", "", "lock repository OWNER/REPO (required)")
	fs.StringVar(&r.lock, "lock", "", "lock name (required)")
	fs.StringVar(&r.branch, "branch", store.DefaultBranch, "branch that carries lock state")
	fs.StringVar(&r.format, "format", lockview.FormatTable, "output format: "+strings.Join(formats, ", "))
	fs.StringVar(&r.tokenEnv, "token-env", "GITHUB_TOKEN", "environment variable holding a token with contents: read")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: buildlock %s --repo OWNER/REPO --lock NAME [--branch lock-state] [--format %s] [--token-env GITHUB_TOKEN]\n", name, strings.Join(formats, "|"))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return r, err
		}
		return r, fmt.Errorf("%w: %v", errUsage, err)
	}
	usage := func(format string, a ...any) error {
		msg := fmt.Sprintf(format, a...)
		fmt.Fprintf(stderr, "buildlock %s: %s\n", name, msg)
		return fmt.Errorf("%w: %s", errUsage, msg)
	}
	switch {
	case fs.NArg() > 0:
		return r, usage("unexpected arguments %q", fs.Args())
	case !statusRepoRE.MatchString(r.repo):
		return r, usage("--repo must be OWNER/REPO, got %q", r.repo)
	case r.lock == "":
		return r, usage("--lock is required")
	case !slices.Contains(formats, r.format):
		return r, usage("--format must be one of %s, got %q", strings.Join(formats, ", "), r.format)
	case !statusEnvNames.MatchString(r.tokenEnv):
		return r, usage("--token-env must name an environment variable")
	}
	r.token = strings.TrimSpace(getenv(r.tokenEnv))
	r.apiURL, r.serverURL = getenv("GITHUB_API_URL"), getenv("GITHUB_SERVER_URL")
	return r, nil
}
