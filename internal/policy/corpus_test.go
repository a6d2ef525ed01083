package policy_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy"
	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/policy/registry"
)

const (
	lockRepo = "Ambiguous-Interactive/ambiguous-organization-build-lock"
	lockPin  = "0000000000000000000000000000000000000000"
	wfPath   = ".github/workflows/unity.yml"
)

var testNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// consumerWorkflow is the consumer pattern the corpus checks. It is the
// fixture until the README's complete consumer workflow lands (issue 11);
// then it becomes readmeConsumerWorkflow(t).
func consumerWorkflow(t *testing.T) string { return corpusConsumerWorkflow(t) }

func corpusConsumerWorkflow(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "corpus", "consumer-workflow.yml"))
	require.NoError(t, err)
	return string(b)
}

// readmeConsumerWorkflow extracts the workflow between the README's
// consumer-workflow markers.
func readmeConsumerWorkflow(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(b), "<!-- consumer-workflow:begin -->\n")
	require.True(t, ok)
	body, _, ok := strings.Cut(after, "<!-- consumer-workflow:end -->")
	require.True(t, ok)
	body = strings.TrimPrefix(strings.TrimSpace(body), "```yaml\n")
	return strings.TrimSuffix(body, "```")
}

func basePolicy() policy.Policy {
	return policy.Policy{LockRepository: lockRepo, ApprovedLockShas: []string{lockPin}, ApprovedReturnShas: []string{lockPin},
		DefaultBranch: "main", Now: testNow}
}

func snapshotOf(files map[string]string) policy.Snapshot {
	s := policy.Snapshot{Repository: "acme/game", Commit: strings.Repeat("a", 40), Files: map[string][]byte{}, Remote: map[string][]byte{}}
	for k, v := range files {
		s.Files[k] = []byte(v)
	}
	return s
}

func TestConsumerWorkflowPassesClean(t *testing.T) {
	t.Parallel()
	res := policy.Analyze(snapshotOf(map[string]string{wfPath: consumerWorkflow(t)}), basePolicy())
	assert.Empty(t, res.Findings)
	classes := map[string]policy.Class{}
	for _, r := range res.Inventory {
		classes[r.Job] = r.Class
	}
	assert.Equal(t, map[string]policy.Class{
		"static": policy.NonLicensingStatic, "preflight": policy.NonLicensingStatic, "classify": policy.NonLicensingStatic,
		"licensed": policy.PaidSerial, "fallback-cleanup": policy.FallbackCleanup, "unity-validation": policy.NonLicensingStatic,
	}, classes)
}

// fixture is one testdata/corpus/findings/<code>.txt: edits of the
// consumer workflow (or files of its own) that must yield exactly <code>.
//
// Sections start with a line "-- <kind> [argument] --":
//
//	-- replace --         text of the base workflow (must occur exactly once;
//	                      the newline before the next section line is not part of it)
//	-- with --            its replacement (same)
//	-- file <path> --     an extra (or, for the workflow path, a replacement) file
//	-- remote <ref> --    a remote reusable workflow at a pinned ref
//	-- drop <path> --     remove a file from the snapshot
//	-- gap <path> --      a reader gap (the section body is the reason)
//	-- policy --          JSON overrides: defaultBranch, allowWorkflowDispatch,
//	                      approvedLockShas, approvedReturnShas, noRegistry,
//	                      exceptions, now
//	-- expect --          (real-world corpus only) JSON {"codes": [...],
//	                      "inventory": {"<path>#<job>": "<class>"}}
//
// Lines before the first section are comments.
type fixture struct {
	snap   policy.Snapshot
	pol    policy.Policy
	expect string
}

type policyOverrides struct {
	DefaultBranch         *string              `json:"defaultBranch"`
	AllowWorkflowDispatch *bool                `json:"allowWorkflowDispatch"`
	ApprovedLockShas      []string             `json:"approvedLockShas"`
	ApprovedReturnShas    []string             `json:"approvedReturnShas"`
	NoRegistry            bool                 `json:"noRegistry"`
	Exceptions            []registry.Exception `json:"exceptions"`
	Now                   *time.Time           `json:"now"`
}

func loadFixture(t *testing.T, file, base string) fixture {
	t.Helper()
	raw, err := os.ReadFile(file)
	require.NoError(t, err)
	type section struct{ kind, arg, body string }
	var secs []section
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		trim := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trim, "-- ") && strings.HasSuffix(trim, " --") {
			f := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(trim, "-- "), " --"))
			sec := section{kind: f[0]}
			if len(f) > 1 {
				sec.arg = f[1]
			}
			secs = append(secs, sec)
			continue
		}
		if len(secs) > 0 {
			secs[len(secs)-1].body += line
		}
	}
	files := map[string]string{wfPath: base}
	fx := fixture{pol: basePolicy()}
	var remote = map[string]string{}
	var gaps []policy.Gap
	for i := 0; i < len(secs); i++ {
		sec := secs[i]
		switch sec.kind {
		case "replace":
			require.Less(t, i+1, len(secs), "%s: replace without with", file)
			require.Equal(t, "with", secs[i+1].kind, "%s: replace must be followed by with", file)
			// The newline before the next section line separates; it is
			// not part of the text, so a fragment of a line can be replaced.
			old, repl := strings.TrimSuffix(sec.body, "\n"), strings.TrimSuffix(secs[i+1].body, "\n")
			require.Equal(t, 1, strings.Count(files[wfPath], old), "%s: replace text must occur exactly once:\n%s", file, old)
			files[wfPath] = strings.Replace(files[wfPath], old, repl, 1)
			i++
		case "file":
			files[sec.arg] = sec.body
		case "remote":
			remote[sec.arg] = sec.body
		case "drop":
			delete(files, sec.arg)
		case "expect":
			fx.expect = sec.body
		case "gap":
			gaps = append(gaps, policy.Gap{Path: sec.arg, Reason: strings.TrimSpace(sec.body)})
		case "policy":
			var o policyOverrides
			require.NoError(t, json.Unmarshal([]byte(sec.body), &o), file)
			if o.DefaultBranch != nil {
				fx.pol.DefaultBranch = *o.DefaultBranch
			}
			if o.AllowWorkflowDispatch != nil {
				fx.pol.AllowWorkflowDispatch = *o.AllowWorkflowDispatch
			}
			if o.ApprovedLockShas != nil {
				fx.pol.ApprovedLockShas = o.ApprovedLockShas
			}
			if o.ApprovedReturnShas != nil {
				fx.pol.ApprovedReturnShas = o.ApprovedReturnShas
			}
			if o.NoRegistry {
				fx.pol.ApprovedLockShas, fx.pol.ApprovedReturnShas = nil, nil
			}
			fx.pol.Exceptions = o.Exceptions
			if o.Now != nil {
				fx.pol.Now = *o.Now
			}
		default:
			t.Fatalf("%s: unknown section %q", file, sec.kind)
		}
	}
	fx.snap = snapshotOf(files)
	for k, v := range remote {
		fx.snap.Remote[k] = []byte(v)
	}
	fx.snap.Incomplete = gaps
	return fx
}

// TestEveryFindingCodeHasAFixture: one fixture per consumer code, and each
// fails with exactly that code and no other.
func TestEveryFindingCodeHasAFixture(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "findings", "*.txt"))
	require.NoError(t, err)
	have := map[policy.Code]bool{}
	for _, f := range files {
		code := policy.Code(strings.TrimSuffix(filepath.Base(f), ".txt"))
		if i := strings.Index(string(code), "@"); i >= 0 {
			code = code[:i]
		}
		have[code] = true
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			fx := loadFixture(t, f, base)
			require.Empty(t, fx.expect, "finding fixtures are named for their one code")
			res := policy.Analyze(fx.snap, fx.pol)
			assert.Equal(t, []policy.Code{code}, res.Codes(), "findings: %+v", res.Findings)
			assert.NotEmpty(t, policy.Hint(code))
		})
	}
	var missing []string
	for _, c := range policy.ConsumerCodes() {
		if !have[c] {
			missing = append(missing, string(c))
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "finding codes without a fixture")
}

// TestRealWorldCorpus: repositories shaped like real ones (matrices,
// reusable workflows, composite actions calling composites, Windows and
// Linux runners) classify as their expect section documents.
func TestRealWorldCorpus(t *testing.T) {
	t.Parallel()
	base := consumerWorkflow(t)
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "realworld", "*.txt"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 10)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			fx := loadFixture(t, f, base)
			var want struct {
				Codes     []policy.Code           `json:"codes"`
				Inventory map[string]policy.Class `json:"inventory"`
			}
			require.NoError(t, json.Unmarshal([]byte(fx.expect), &want), "expect section")
			res := policy.Analyze(fx.snap, fx.pol)
			if want.Codes == nil {
				want.Codes = []policy.Code{}
			}
			got := res.Codes()
			if got == nil {
				got = []policy.Code{}
			}
			assert.Equal(t, want.Codes, got, "findings: %+v", res.Findings)
			inv := map[string]policy.Class{}
			for _, r := range res.Inventory {
				inv[r.Path+"#"+r.Job] = r.Class
			}
			assert.Equal(t, want.Inventory, inv)
		})
	}
}

// TestReadmeConsumerWorkflowPassesClean: the consumer workflow the README
// shows (and docs/examples/consumer-workflow.yml, byte for byte) is what
// the enrollment audit accepts: no finding, and the documented classes.
// The corpus above mutates its own fixture, whose text the replacements
// are written against.
func TestReadmeConsumerWorkflowPassesClean(t *testing.T) {
	t.Parallel()
	res := policy.Analyze(snapshotOf(map[string]string{".github/workflows/unity.yml": readmeConsumerWorkflow(t)}), basePolicy())
	assert.Empty(t, res.Findings)
	classes := map[string]policy.Class{}
	for _, row := range res.Inventory {
		classes[row.Job] = row.Class
	}
	assert.Equal(t, policy.Class("paid-serial"), classes["licensed"])
	assert.Equal(t, policy.Class("fallback-cleanup"), classes["fallback"])
	for _, job := range []string{"static", "classify", "preflight", "gate"} {
		assert.Equal(t, policy.Class("non-licensing-static"), classes[job], job)
	}
}
