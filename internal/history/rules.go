package history

import (
	"crypto/sha1" //nolint:gosec // git object ids are SHA-1 by definition
	"encoding/hex"
	"fmt"
	"time"

	"github.com/Ambiguous-Interactive/ambiguous-organization-build-lock/internal/lockstate"
)

// Rule is the stable, kebab-case code of one verification rule. Reports,
// JSON output and alert issues carry it verbatim; docs/history.md explains
// each.
type Rule string

// Per-version rules.
const (
	// RuleInvalidDocument: the version fails lockstate.Decode (every reader
	// would refuse it). The finding's Detail carries the lockstate code.
	RuleInvalidDocument Rule = "invalid-document"
	// RuleOverCapacity: an admission raised the seats in use (holders, or
	// holders plus reservations) above the largest maxHolders any config in
	// force around that time allowed.
	RuleOverCapacity Rule = "over-capacity"
	// RuleDuplicateIdentity: one holderId both holds a seat and waits in
	// the queue.
	RuleDuplicateIdentity Rule = "duplicate-identity"
	// RuleStateDeleted: a commit deleted the state file (the next write
	// re-creates it from an empty lock, losing every holder).
	RuleStateDeleted Rule = "state-deleted"
	// RuleMachineSerialization: two holders or reservations record one
	// machineId (serializeBy "machine", issue 26): one machine holds two
	// seats. Acquire records the machine only under "machine", and every
	// admission of the core keys on it once recorded.
	RuleMachineSerialization Rule = "machine-serialization"
)

// Per-transition rules.
const (
	// RuleSchemaDowngrade: schemaVersion went down.
	RuleSchemaDowngrade Rule = "schema-downgrade"
	// RuleFencingToken: the fencing counter went down, an admission's token
	// is not above every token issued before (a reused token), the counter
	// moved by other than the number of admissions, or a holder's token
	// changed.
	RuleFencingToken Rule = "fencing-token"
	// RuleOvertakingBound: a waiter's overtakes grew past the largest
	// maxOvertakes in force, or by more than one in one write.
	RuleOvertakingBound Rule = "overtaking-bound"
	// RuleFIFOSkipped: an admission took a waiter while earlier admissible
	// waiters filled every free seat.
	RuleFIFOSkipped Rule = "fifo-skipped"
	// RuleReapWithoutProof: a holder became a reaper quarantine whose
	// recorded reason proves nothing stale.
	RuleReapWithoutProof Rule = "reap-without-proof"
	// RuleUnexplainedTransition: no transition of the pure core (in the
	// recognized table) produces this version from its parent under any
	// config in force.
	RuleUnexplainedTransition Rule = "unexplained-transition"
	// RuleGenesis: the file's first version is neither an empty lock nor
	// what a first write can produce from the missing file.
	RuleGenesis Rule = "genesis"
)

// Per-commit rules.
const (
	// RuleForeignAuthor: the commit's author is neither a writer nor (for
	// recovery and bootstrap) an operator.
	RuleForeignAuthor Rule = "foreign-author"
	// RuleUnsignedWriter: the commit is attributed to a writer but carries
	// no GitHub-verified signature. GitHub signs the Contents API writes of
	// an App installation (its web-flow key), so an unsigned commit under
	// the writer's login is a git push made with the App's noreply address
	// by anyone who can push to the branch.
	RuleUnsignedWriter Rule = "unsigned-writer"
	// RuleBrokenChain: a merge commit, or a commit without a parent after
	// the first, in the state file's history.
	RuleBrokenChain Rule = "broken-chain"
	// RuleRewritten: the branch no longer contains a commit the previous
	// run verified (a force-push or rewrite). The finding names the first
	// missing commit.
	RuleRewritten Rule = "rewritten"
)

// Status is the verdict of one verification.
type Status string

// Statuses.
const (
	// StatusClean: every commit read was verified and none broke a rule.
	StatusClean Status = "clean"
	// StatusViolations: at least one finding that is not acknowledged.
	StatusViolations Status = "violations"
	// StatusIncomplete: the history could not be read completely or its
	// start could not be proven (truncated, unreadable, over a bound).
	// Never a pass.
	StatusIncomplete Status = "incomplete"
)

// Finding is one broken rule at one commit.
type Finding struct {
	Rule Rule `json:"rule"`
	// Commit is the commit that broke the rule (for RuleRewritten, the first
	// commit the branch no longer contains).
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"`
	Author string    `json:"author,omitempty"`
	// Message is the commit message.
	Message string `json:"message,omitempty"`
	// Detail explains the finding for an operator.
	Detail string `json:"detail"`
	// Before and After are the parent version and this version of the state
	// file (empty when absent).
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Acknowledged is true when an operator accepted findings at Commit.
	Acknowledged bool `json:"acknowledged,omitempty"`
}

// Step is one verified commit: what it did and the state it left, the raw
// material of the statistics.
type Step struct {
	Commit Commit `json:"commit"`
	// Kind and Result name the transition that reproduced the version (the
	// table's kind and the core's typed result); Kind is "" when none did.
	Kind   Kind   `json:"kind,omitempty"`
	Result string `json:"result,omitempty"`
	// Now is the writer's clock that reproduced it (zero when unknown).
	Now time.Time `json:"now,omitzero"`
	// Config is the config that reproduced it.
	Config lockstate.Config `json:"-"`
	// MaxHolders is the largest maxHolders in force around the commit;
	// Seats is the maxHolders of the config in force at the commit.
	MaxHolders int `json:"max_holders"`
	Seats      int `json:"seats"`
	// Prev and State are the decoded parent and version (nil when invalid
	// or deleted).
	Prev  *lockstate.State `json:"-"`
	State *lockstate.State `json:"-"`
	// Findings counts this commit's findings.
	Findings int `json:"findings,omitempty"`
}

// Result is the outcome of Verify.
type Result struct {
	Lock   string `json:"lock"`
	Status Status `json:"status"`
	// Incomplete says why the status is StatusIncomplete.
	Incomplete string `json:"incomplete,omitempty"`
	// Commits is the number of commits checked in this run.
	Commits int `json:"commits"`
	// First and Last bound the checked commits.
	First, Last *Commit `json:"-"`
	// Transitions counts the checked commits by Kind ("unexplained" for
	// none).
	Transitions map[string]int `json:"transitions"`
	// Results counts them by the core's typed result.
	Results map[string]int `json:"results"`
	// Findings lists every finding in commit order; FirstViolation is the
	// first that is not acknowledged.
	Findings       []Finding `json:"findings"`
	FirstViolation *Finding  `json:"first_violation,omitempty"`
	// Notes are observations that are not violations (gaps, clock skew,
	// transitions only the safe default config explains).
	Notes []string `json:"notes,omitempty"`
	// Steps are the checked commits in order (for statistics).
	Steps []Step `json:"-"`
	// Verified are the versions the checkpoint may advance over: the
	// longest prefix of the checked commits without an unacknowledged
	// finding (all of them when the status is clean).
	Verified []Version `json:"-"`
	// Rebased is true when a rewrite was acknowledged: the next checkpoint
	// starts over on the new chain.
	Rebased bool `json:"rebased,omitempty"`
	// MaxFencingToken is the largest fencing token seen up to the end of
	// Verified (what the next checkpoint records).
	MaxFencingToken int64 `json:"max_fencing_token"`
	// Base is the version the checked commits start from (Input.Base), as
	// a step: the state at the start of a report window.
	Base *Step `json:"-"`
	// Reclaimed are the quarantines consumed by reclaims of the holders of
	// the last verified version (Checkpoint.Reclaimed).
	Reclaimed map[string]lockstate.Reservation `json:"-"`
}

// Violations counts the findings that are not acknowledged.
func (r *Result) Violations() int {
	n := 0
	for _, f := range r.Findings {
		if !f.Acknowledged {
			n++
		}
	}
	return n
}

// OK reports whether the result is a pass: clean.
func (r *Result) OK() bool { return r.Status == StatusClean }

func blobSHA(b []byte) string {
	h := sha1.New() //nolint:gosec // git object ids are SHA-1 by definition
	fmt.Fprintf(h, "blob %d\x00", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// BlobSHA returns the git blob id of b (git hash-object), what the Contents
// API reports as a file's sha.
func BlobSHA(b []byte) string { return blobSHA(b) }
