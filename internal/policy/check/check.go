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
	"path"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/actionio"
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
	// Repository is --repository (or, for the lock repository audit,
	// --lock-repository).
	Repository string `json:"repository,omitempty"`
	// WorkflowsChecked is the number of workflow files read (the lock
	// repository audit: of .yml/.yaml files under .github).
	WorkflowsChecked int `json:"workflowsChecked"`
	// Findings are the findings with their fixes (with --from-reference,
	// those the migration does not resolve).
	Findings []Finding `json:"findings"`
	// Inventory is every job's class (empty for the lock repository
	// audit).
	Inventory []policy.InventoryRow `json:"inventory"`
	// Migration is the --from-reference plan (Findings then holds what it
	// does not resolve).
	Migration []policy.MigrationStep `json:"migration,omitempty"`
}

// Finding is a finding with its fix.
type Finding struct {
	policy.Finding
	Hint string `json:"hint"`
}

// esc is the project's one escaping path for a value printed on a log
// line (actionio.EscapeData): a path, job id or error from a workflow can
// never start a line of its own, so it can never be a workflow command.
func esc(s string) string { return actionio.EscapeData(s) }

// Main runs `policy check [flags] [path]`: findings one per line as
// path:line: code: hint (or --json), ErrFindings when there is any.
// now decides exception expiry. Every value from a workflow, a file name
// or the registry is printed through actionio (escaped; a line never
// begins a workflow command).
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
	fromRef := fs.Bool("from-reference", false, "for workflows the reference implementation accepts: print the additions this policy needs (the current-head guard, the fallback job, the typed aggregate) as YAML, in the order to make them, then the other findings")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: buildlock policy check [flags] [path]\n\n"+
			"Checks workflows against the organization's workflow policy. path (default .) is a repository root,\n"+
			"its .github/workflows directory, one workflow file, or a directory of .yml/.yaml files (each read as\n"+
			"a workflow, e.g. docs/examples). Exit 0 clean, 1 findings, 2 usage or nothing to check.\n"+
			"docs/enrollment.md lists every finding code.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %s", ErrUsage, esc(err.Error()))
	}
	log := actionio.New(func(string) string { return "" }, stderr)
	arg := "."
	switch fs.NArg() {
	case 0:
	case 1:
		arg = fs.Arg(0)
	default:
		return fmt.Errorf("%w: at most one path", ErrUsage)
	}
	if _, _, ok := registry.SplitRepository(*lockRepo); !ok {
		return fmt.Errorf("%w: --lock-repository %q is not owner/name", ErrUsage, *lockRepo)
	}
	if *self && *fromRef {
		return fmt.Errorf("%w: --from-reference plans a consumer's migration; it does not apply to --lock-repository-audit", ErrUsage)
	}
	var out Output
	if *self {
		if !isDir(arg) {
			return fmt.Errorf("%w: %s is not a directory (the lock repository audit reads a repository root)", ErrUsage, esc(arg))
		}
		files, gaps, err := snapshot.DotGitHub(arg)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrUsage, esc(err.Error()))
		}
		out.Repository, out.WorkflowsChecked = *lockRepo, len(files)+len(gaps)
		for _, f := range policy.AuditLockRepository(files, policy.LockRepositoryOptions{LockRepository: *lockRepo, Gaps: gaps}) {
			out.Findings = append(out.Findings, Finding{Finding: f, Hint: f.Hint()})
		}
		out.Inventory = []policy.InventoryRow{}
	} else {
		t, err := resolveTarget(arg)
		switch {
		case errors.Is(err, errNothing):
			return fmt.Errorf("%w: 0 workflows checked: %s holds no workflow file (a repository root with .github/workflows, that directory, a .yml/.yaml file, or a directory of them)", ErrUsage, esc(arg))
		case err != nil:
			return fmt.Errorf("%w: %s: %s", ErrUsage, esc(arg), esc(err.Error()))
		}
		display := t.display
		pol := policy.Policy{LockRepository: *lockRepo, DefaultBranch: *branch, AllowWorkflowDispatch: *dispatch, Now: now()}
		if *regFile != "" {
			data, err := os.ReadFile(*regFile)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrUsage, esc(err.Error()))
			}
			reg, err := registry.Decode(data, registry.DecodeOptions{})
			if err != nil {
				return fmt.Errorf("%w: %s", ErrUsage, esc(err.Error()))
			}
			if p, ok := policy.PolicyFor(reg, *lockRepo, *repo, now()); ok {
				pol = p
			} else {
				pol.ApprovedLockShas, pol.ApprovedReturnShas = reg.ApprovedLockShas, reg.ApprovedReturnShas
				if *repo != "" {
					log.Printf("buildlock policy check: %s is not in the registry; checking pins only", *repo)
				}
			}
		}
		snap, err := snapshot.Load(ctx, *repo, "", t.source(), nil)
		if err != nil {
			return err
		}
		out.WorkflowsChecked = workflowsRead(snap)
		if out.WorkflowsChecked == 0 {
			return fmt.Errorf("%w: 0 workflows checked: %s holds no workflow file", ErrUsage, esc(arg))
		}
		res := policy.Analyze(snap, pol)
		findings := res.Findings
		if *fromRef {
			plan := policy.MigrationPlan(snap, pol)
			res, findings = plan.Result, plan.Remaining
			out.Migration = plan.Steps
			for i := range out.Migration {
				out.Migration[i].Path = display(out.Migration[i].Path)
			}
		}
		out.Repository, out.Inventory = *repo, res.Inventory
		for _, f := range findings {
			f.Path = display(f.Path)
			out.Findings = append(out.Findings, Finding{Finding: f, Hint: f.Hint()})
		}
		for i := range out.Inventory {
			out.Inventory[i].Path = display(out.Inventory[i].Path)
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
		lines := actionio.New(func(string) string { return "" }, stdout)
		if *fromRef {
			printMigration(lines, out)
		}
		for _, f := range out.Findings {
			lines.Println(Line(f.Finding))
		}
		noun := "workflows"
		if *self {
			noun = "files"
		}
		summary := fmt.Sprintf("buildlock policy check: %d %s checked, %d findings", out.WorkflowsChecked, noun, len(out.Findings))
		if *fromRef {
			summary += fmt.Sprintf(", %d additions to migrate from the reference", len(out.Migration))
		}
		log.Println(summary)
	}
	if len(out.Migration) > 0 {
		return fmt.Errorf("%w: %d additions to make, %d other findings", ErrFindings, len(out.Migration), len(out.Findings))
	}
	if len(out.Findings) > 0 {
		return fmt.Errorf("%w: %d findings", ErrFindings, len(out.Findings))
	}
	return nil
}

// printMigration prints the --from-reference plan: each addition with
// where it goes and its YAML, in order, then a header for the findings
// that follow. Every line goes through actionio (escaped).
func printMigration(lines *actionio.IO, out Output) {
	if len(out.Migration) == 0 {
		if len(out.Findings) == 0 {
			lines.Println("Nothing to migrate: every workflow passes the policy.")
		} else {
			lines.Println("Nothing to migrate from the reference pattern; the findings below are to fix as usual.")
		}
		return
	}
	lines.Printf("Migration from the reference pattern: %d additions, in this order.", len(out.Migration))
	for i, st := range out.Migration {
		codes := make([]string, len(st.Resolves))
		for k, c := range st.Resolves {
			codes[k] = string(c)
		}
		lines.Println("")
		lines.Printf("%d. %s: %s (resolves %s)", i+1, st.Path, st.Text, strings.Join(codes, ", "))
		if st.YAML != "" {
			for _, l := range strings.Split(strings.TrimSuffix(st.YAML, "\n"), "\n") {
				lines.Println(l)
			}
		}
	}
	if len(out.Findings) > 0 {
		lines.Println("")
		lines.Printf("Other findings (not part of the migration): %d", len(out.Findings))
	}
}

// workflowsRead counts the workflow files of a snapshot: read, or named by
// a gap (a symlinked or oversized workflow is checked, as a finding).
func workflowsRead(s policy.Snapshot) int {
	n := 0
	for p := range s.Files {
		if path.Dir(p) == snapshot.WorkflowDir && isYAML(p) {
			n++
		}
	}
	for _, g := range s.Incomplete {
		if path.Dir(g.Path) == snapshot.WorkflowDir && isYAML(g.Path) {
			n++
		}
	}
	return n
}

// Line renders a finding as path:line: code: hint (the path "." for a
// repository-level finding; job and detail in brackets when present).
// Values are not escaped here: print the line through actionio (Main
// does), whose one escaping path keeps it a single plain log line.
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
