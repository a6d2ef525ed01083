// Package check is `buildlock policy check`: the workflow policy analyzer
// on a local checkout, for a consumer before they push and for pre-commit
// hooks, and (with --lock-repository-audit) the lock repository's own
// audits for CI.
package check

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/snapshot"
)

// DefaultLockRepository is the lock repository whose actions consumers
// pin, unless --lock-repository names another.
const DefaultLockRepository = "Ambiguous-Interactive/ambiguous-organization-build-lock"

// ErrUsage marks bad flags or an unreadable registry (exit 2).
var ErrUsage = errors.New("policy check: usage")

// ErrFindings means the check found something (exit 1).
var ErrFindings = errors.New("the workflow policy check failed")

// Output is the --json document.
type Output struct {
	Repository string                `json:"repository,omitempty"`
	Findings   []Finding             `json:"findings"`
	Inventory  []policy.InventoryRow `json:"inventory"`
}

// Finding is a finding with its fix.
type Finding struct {
	policy.Finding
	Hint string `json:"hint"`
}

// Main runs `policy check [flags] [path]`: findings one per line as
// path:line: code: hint (or --json), ErrFindings when there is any.
// now decides exception expiry.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, now func() time.Time) error {
	fs := flag.NewFlagSet("buildlock policy check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON document instead of one finding per line")
	regFile := fs.String("registry", "", "the organization's "+registry.Path+": check pins against approvedLockShas and apply this repository's row and exceptions (without it pins are checked for shape only)")
	repo := fs.String("repository", "", "owner/name of the checked repository (its registry row and exceptions)")
	lockRepo := fs.String("lock-repository", DefaultLockRepository, "owner/name of the lock repository whose actions are lock actions")
	branch := fs.String("default-branch", policy.DefaultBranch, "the protected branch a licensed push may name (the registry row wins)")
	dispatch := fs.Bool("allow-workflow-dispatch", false, "admit workflow_dispatch as a licensed trigger (the registry row wins)")
	self := fs.Bool("lock-repository-audit", false, "run the lock repository's own audits (cancellation, credential literals, run: interpolation, credentialed URLs, pins) instead")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: buildlock policy check [flags] [path]\n\nChecks the workflows of the checkout at path (default .) against the organization's workflow policy.\nExit 0 clean, 1 findings, 2 usage. docs/enrollment.md lists every finding code.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	root := "."
	switch fs.NArg() {
	case 0:
	case 1:
		root = fs.Arg(0)
	default:
		return fmt.Errorf("%w: at most one path", ErrUsage)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", ErrUsage, root)
	}
	if _, _, ok := registry.SplitRepository(*lockRepo); !ok {
		return fmt.Errorf("%w: --lock-repository %q is not owner/name", ErrUsage, *lockRepo)
	}
	var out Output
	if *self {
		files, err := snapshot.DotGitHub(root)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUsage, err)
		}
		out.Repository = *lockRepo
		for _, f := range policy.AuditLockRepository(files, policy.LockRepositoryOptions{LockRepository: *lockRepo}) {
			out.Findings = append(out.Findings, Finding{Finding: f, Hint: f.Hint()})
		}
		out.Inventory = []policy.InventoryRow{}
	} else {
		pol := policy.Policy{LockRepository: *lockRepo, DefaultBranch: *branch, AllowWorkflowDispatch: *dispatch, Now: now()}
		if *regFile != "" {
			data, err := os.ReadFile(*regFile)
			if err != nil {
				return fmt.Errorf("%w: %v", ErrUsage, err)
			}
			reg, err := registry.Decode(data, registry.DecodeOptions{})
			if err != nil {
				return fmt.Errorf("%w: %v", ErrUsage, err)
			}
			if p, ok := policy.PolicyFor(reg, *lockRepo, *repo, now()); ok {
				pol = p
			} else {
				pol.ApprovedLockShas, pol.ApprovedReturnShas = reg.ApprovedLockShas, reg.ApprovedReturnShas
				if *repo != "" {
					fmt.Fprintf(stderr, "buildlock policy check: %s is not in the registry; checking pins only\n", *repo)
				}
			}
		}
		snap, err := snapshot.Load(ctx, *repo, "", snapshot.Dir{Root: root}, nil)
		if err != nil {
			return err
		}
		res := policy.Analyze(snap, pol)
		out.Repository, out.Inventory = *repo, res.Inventory
		for _, f := range res.Findings {
			out.Findings = append(out.Findings, Finding{Finding: f, Hint: f.Hint()})
		}
	}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		for _, f := range out.Findings {
			fmt.Fprintln(stdout, Line(f.Finding))
		}
	}
	if len(out.Findings) > 0 {
		return fmt.Errorf("%w: %d findings", ErrFindings, len(out.Findings))
	}
	return nil
}

// Line renders a finding as path:line: code: hint (the path "." for a
// repository-level finding; job and detail in brackets when present).
func Line(f policy.Finding) string {
	p := f.Path
	if p == "" {
		p = "."
	}
	var b strings.Builder
	b.WriteString(p)
	if f.Line > 0 {
		fmt.Fprintf(&b, ":%d", f.Line)
	}
	b.WriteString(": " + string(f.Code) + ": " + f.Hint())
	var extra []string
	if f.Job != "" {
		extra = append(extra, "job "+f.Job)
	}
	if f.Detail != "" {
		extra = append(extra, f.Detail)
	}
	if len(extra) > 0 {
		b.WriteString(" [" + strings.Join(extra, ", ") + "]")
	}
	return b.String()
}
