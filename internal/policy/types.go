package policy

import (
	"sort"
	"strings"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

// Snapshot is one repository at one commit, as bytes: what a reader
// fetched. The analyzer never reads anything else.
type Snapshot struct {
	// Repository is "owner/name".
	Repository string
	// Commit is the exact commit the files were read at (40 hex; may be
	// empty for a local working tree).
	Commit string
	// Files maps repository-relative paths ("/"-separated) to content:
	// every .github/workflows/*.yml|yaml, every action.yml|yaml of a local
	// action, every local reusable workflow. References lists what a reader
	// still has to add.
	Files map[string][]byte
	// Remote maps a pinned remote reusable workflow reference
	// ("owner/repo/path@sha", as written after uses:) to its content at that
	// commit. A reference absent here is unresolved.
	Remote map[string][]byte
	// Incomplete lists what the reader could not read (source-free
	// reasons); each becomes a repository-retrieval-incomplete finding.
	Incomplete []Gap
}

// Gap is one part of the repository the reader could not read.
type Gap struct {
	// Path is the file or directory ("" for the repository itself).
	Path string
	// Reason is a short, source-free reason (e.g. "tree-truncated",
	// "not-found", "too-large").
	Reason string
}

// Policy is what the analyzer checks against.
type Policy struct {
	// LockRepository is "owner/name" of the lock repository: lock actions
	// are only accepted from it.
	LockRepository string
	// ApprovedLockShas and ApprovedReturnShas are the registry's pins. nil
	// means "no registry": pins are checked for shape only.
	ApprovedLockShas   []string
	ApprovedReturnShas []string
	// DefaultBranch is the protected branch a licensed push may name
	// (default "main").
	DefaultBranch string
	// AllowWorkflowDispatch admits workflow_dispatch as a licensed trigger.
	AllowWorkflowDispatch bool
	// Exceptions are the registry exceptions of this repository.
	Exceptions []registry.Exception
	// Now decides exception expiry (the only clock the analyzer uses).
	Now time.Time
}

// PolicyFor builds the Policy of one enrolled repository from the
// registry. ok is false when the repository is not registered.
func PolicyFor(reg *registry.Registry, lockRepository, repository string, now time.Time) (Policy, bool) {
	row, ok := reg.Lookup(repository)
	if !ok {
		return Policy{}, false
	}
	return Policy{
		LockRepository:        lockRepository,
		ApprovedLockShas:      append([]string{}, reg.ApprovedLockShas...),
		ApprovedReturnShas:    append([]string{}, reg.ApprovedReturnShas...),
		DefaultBranch:         row.DefaultBranch,
		AllowWorkflowDispatch: row.AllowWorkflowDispatch,
		Exceptions:            reg.ExceptionsFor(repository),
		Now:                   now,
	}, true
}

// Class is a job's inventory classification.
type Class string

// Inventory classes, in precedence order (fallback-cleanup, then paid, then
// an exception's class, then the default).
const (
	// FallbackCleanup is a hosted job whose only work is releasing a lost
	// runner's seat.
	FallbackCleanup Class = "fallback-cleanup"
	// PaidSerial is a licensed job (it acquires, or touches Unity
	// credentials or activation).
	PaidSerial Class = "paid-serial"
	// ControlledCanary is a paid job of a workflow that only
	// workflow_dispatch starts.
	ControlledCanary Class = "controlled-canary"
	// Synthetic is a Unity-shaped job under a synthetic exception.
	Synthetic Class = "synthetic"
	// Disabled is a Unity-shaped job under a disabled exception.
	Disabled Class = "disabled"
	// NonLicensingStatic is every other job.
	NonLicensingStatic Class = "non-licensing-static"
)

// Finding is one broken rule. It is source-free: no file content, matched
// value or secret, only where and which rule.
type Finding struct {
	// Code is the stable finding code.
	Code Code `json:"code"`
	// Path is the file ("" for the repository; for a remote reusable
	// workflow "owner/repo/path@sha").
	Path string `json:"path,omitempty"`
	// Job is the job id ("" for file-level findings).
	Job string `json:"job,omitempty"`
	// Line is the 1-based line in Path (0 when unknown).
	Line int `json:"line,omitempty"`
	// Detail is a short source-free qualifier (e.g. the gap reason).
	Detail string `json:"detail,omitempty"`
}

// Hint is the finding's one-line fix.
func (f Finding) Hint() string { return Hint(f.Code) }

// InventoryRow is one job's classification.
type InventoryRow struct {
	// Path is the workflow file.
	Path string `json:"path"`
	// Job is the job id.
	Job string `json:"job"`
	// Class is the classification.
	Class Class `json:"class"`
}

// Result is the analysis of one snapshot.
type Result struct {
	// Repository and Commit echo the snapshot.
	Repository string `json:"repository"`
	Commit     string `json:"commit,omitempty"`
	// Inventory is every job's class, sorted by path and job.
	Inventory []InventoryRow `json:"inventory"`
	// Findings are sorted by path, line, job and code, without duplicates.
	Findings []Finding `json:"findings"`
}

// Clean reports whether the result has no finding.
func (r Result) Clean() bool { return len(r.Findings) == 0 }

// Codes returns the distinct finding codes, sorted.
func (r Result) Codes() []Code {
	seen := map[Code]bool{}
	var out []Code
	for _, f := range r.Findings {
		if !seen[f.Code] {
			seen[f.Code] = true
			out = append(out, f.Code)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func sortFindings(fs []Finding) []Finding {
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Job != b.Job {
			return a.Job < b.Job
		}
		if a.Code != b.Code {
			return a.Code < b.Code
		}
		return a.Detail < b.Detail
	})
	out := fs[:0]
	for i, f := range fs {
		if i > 0 && f == fs[i-1] {
			continue
		}
		out = append(out, f)
	}
	return out
}

func sortInventory(rows []InventoryRow) []InventoryRow {
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Path != rows[j].Path {
			return rows[i].Path < rows[j].Path
		}
		return rows[i].Job < rows[j].Job
	})
	out := rows[:0]
	for i, r := range rows {
		if i > 0 && r == rows[i-1] {
			continue
		}
		out = append(out, r)
	}
	return out
}

func lowerEq(a, b string) bool { return strings.EqualFold(a, b) }
