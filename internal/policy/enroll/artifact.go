package enroll

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

// Artifact bounds (enrollment contract "Details of the rules": the issue
// sync accepts an audit of at most 4 MiB with at most 4,096 rows each).
const (
	// MaxArtifactBytes bounds an audit artifact.
	MaxArtifactBytes = 4 << 20
	// MaxRows bounds each of the artifact's lists.
	MaxRows = 4096
	// ArtifactSchema is the artifact's schemaVersion.
	ArtifactSchema = 1
)

// Artifact is the sanitized, source-free result of one organization audit:
// what the workflow uploads (kept 30 days) and what the drift issue
// previews. Nothing in it is file content, a matched value or a secret.
type Artifact struct {
	SchemaVersion int `json:"schemaVersion"`
	// Complete is false when any repository could not be read or analyzed
	// completely (repository-retrieval-incomplete or
	// repository-analysis-incomplete).
	Complete bool `json:"complete"`
	// LockRepository is the audited organization's lock repository.
	LockRepository string `json:"lockRepository"`
	// Repositories are the audited repositories with the exact commit read
	// ("" when none could be read).
	Repositories []RepositoryRow `json:"repositories"`
	// Inventory is every job's class.
	Inventory []InventoryRow `json:"inventory"`
	// Findings are every broken rule.
	Findings []FindingRow `json:"findings"`
}

// RepositoryRow is one audited repository.
type RepositoryRow struct {
	Repository string `json:"repository"`
	SHA        string `json:"sha"`
}

// InventoryRow is one job's class in one repository.
type InventoryRow struct {
	Repository     string       `json:"repository"`
	SHA            string       `json:"sha"`
	Path           string       `json:"path"`
	Job            string       `json:"job"`
	Classification policy.Class `json:"classification"`
}

// FindingRow is one finding in one repository.
type FindingRow struct {
	Repository string      `json:"repository"`
	SHA        string      `json:"sha,omitempty"`
	Code       policy.Code `json:"code"`
	Path       string      `json:"path,omitempty"`
	Job        string      `json:"job,omitempty"`
	Line       int         `json:"line,omitempty"`
	Detail     string      `json:"detail,omitempty"`
}

// Clean reports whether the audit is complete and has no finding.
func (a *Artifact) Clean() bool { return a.Complete && len(a.Findings) == 0 }

// incompleteCodes mark an audit as incomplete.
var incompleteCodes = map[policy.Code]bool{policy.RepositoryRetrievalIncomplete: true, policy.RepositoryAnalysisIncomplete: true}

// finish sorts the rows and derives Complete.
func (a *Artifact) finish() {
	sort.Slice(a.Repositories, func(i, j int) bool {
		return strings.ToLower(a.Repositories[i].Repository) < strings.ToLower(a.Repositories[j].Repository)
	})
	sort.SliceStable(a.Inventory, func(i, j int) bool {
		x, y := a.Inventory[i], a.Inventory[j]
		if x.Repository != y.Repository {
			return strings.ToLower(x.Repository) < strings.ToLower(y.Repository)
		}
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		return x.Job < y.Job
	})
	sort.SliceStable(a.Findings, func(i, j int) bool {
		x, y := a.Findings[i], a.Findings[j]
		if x.Repository != y.Repository {
			return strings.ToLower(x.Repository) < strings.ToLower(y.Repository)
		}
		if x.Path != y.Path {
			return x.Path < y.Path
		}
		if x.Line != y.Line {
			return x.Line < y.Line
		}
		if x.Job != y.Job {
			return x.Job < y.Job
		}
		return x.Code < y.Code
	})
	a.Complete = true
	for _, f := range a.Findings {
		if incompleteCodes[f.Code] {
			a.Complete = false
		}
	}
	if a.Repositories == nil {
		a.Repositories = []RepositoryRow{}
	}
	if a.Inventory == nil {
		a.Inventory = []InventoryRow{}
	}
	if a.Findings == nil {
		a.Findings = []FindingRow{}
	}
}

// Encode writes the artifact as two-space JSON with a trailing newline.
func (a *Artifact) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a); err != nil {
		return nil, err
	}
	if buf.Len() > MaxArtifactBytes {
		return nil, fmt.Errorf("enroll: the audit artifact is %d bytes, more than %d", buf.Len(), MaxArtifactBytes)
	}
	return buf.Bytes(), nil
}

var (
	shaRE    = regexp.MustCompile(`^[0-9a-f]{40}$`)
	pathRE   = regexp.MustCompile(`^[A-Za-z0-9._@/-]{1,400}$`)
	jobRE    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,99}$`)
	detailRE = regexp.MustCompile(`^[a-z0-9-]{1,40}$`)
)

var knownCodes = func() map[policy.Code]bool {
	m := map[policy.Code]bool{}
	for _, c := range policy.ConsumerCodes() {
		m[c] = true
	}
	return m
}()

var knownClasses = map[policy.Class]bool{policy.FallbackCleanup: true, policy.PaidSerial: true, policy.ControlledCanary: true,
	policy.Synthetic: true, policy.Disabled: true, policy.NonLicensingStatic: true}

// DecodeArtifact reads an artifact strictly: at most MaxArtifactBytes,
// exactly one JSON object, no unknown field, at most MaxRows rows per list
// and registry.MaxRepositories repositories, and every field matching its
// pattern (repositories owner/name, commits 40 hex, known codes and
// classes, paths, job ids and details of a safe alphabet). An artifact that
// breaks any rule is refused whole: the issue never renders unvalidated
// text.
func DecodeArtifact(r io.Reader) (*Artifact, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxArtifactBytes+1))
	if err != nil {
		return nil, fmt.Errorf("enroll: read the audit artifact: %w", err)
	}
	if len(data) > MaxArtifactBytes {
		return nil, fmt.Errorf("enroll: the audit artifact exceeds %d bytes", MaxArtifactBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var a Artifact
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("enroll: the audit artifact is not valid: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("enroll: the audit artifact holds more than one JSON value")
	}
	if err := a.validate(); err != nil {
		return nil, err
	}
	return &a, nil
}

func (a *Artifact) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("enroll: invalid audit artifact: "+format, args...)
	}
	if a.SchemaVersion != ArtifactSchema {
		return bad("schemaVersion must be %d", ArtifactSchema)
	}
	if _, _, ok := registry.SplitRepository(a.LockRepository); !ok {
		return bad("lockRepository is not owner/name")
	}
	if len(a.Repositories) > registry.MaxRepositories || len(a.Inventory) > MaxRows || len(a.Findings) > MaxRows {
		return bad("more than %d repositories or %d rows", registry.MaxRepositories, MaxRows)
	}
	okSHA := func(s string) bool { return s == "" || shaRE.MatchString(s) }
	okRepo := func(s string) bool { _, _, ok := registry.SplitRepository(s); return ok }
	for i, r := range a.Repositories {
		if !okRepo(r.Repository) || !okSHA(r.SHA) {
			return bad("repositories[%d]", i)
		}
	}
	for i, r := range a.Inventory {
		if !okRepo(r.Repository) || !shaRE.MatchString(r.SHA) || !pathRE.MatchString(r.Path) || !jobRE.MatchString(r.Job) || !knownClasses[r.Classification] {
			return bad("inventory[%d]", i)
		}
	}
	complete := true
	for i, f := range a.Findings {
		if !okRepo(f.Repository) || !okSHA(f.SHA) || !knownCodes[f.Code] || (f.Path != "" && !pathRE.MatchString(f.Path)) ||
			(f.Job != "" && !jobRE.MatchString(f.Job)) || (f.Detail != "" && !detailRE.MatchString(f.Detail)) || f.Line < 0 {
			return bad("findings[%d]", i)
		}
		if incompleteCodes[f.Code] {
			complete = false
		}
	}
	if a.Complete && !complete {
		return bad("complete is true but an incomplete finding is present")
	}
	return nil
}
